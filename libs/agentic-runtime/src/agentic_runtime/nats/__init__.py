"""NATS JetStream: the connection and streams (broker), the background-turn queue's layout. Extra: [nats]."""
