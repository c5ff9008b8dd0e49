"""Permission policy: glob rules over the parts of shell commands, path decisions, session approvals."""
