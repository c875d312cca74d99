"""Gateway-owned tools: the wire contract between executor and runners, and the uniform result form."""
