"""gRPC between the services: peers (client), servers (server) and the one error mapping (errors). Extra: [grpc]."""
