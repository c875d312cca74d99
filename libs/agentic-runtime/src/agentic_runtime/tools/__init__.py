"""The gateway tool protocol on NATS: its names (protocol), the caller's side (dispatch), the runners' side (consumer), operator tools (operator_tools). Extra: [nats]."""
