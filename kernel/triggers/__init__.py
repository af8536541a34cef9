"""Triggers: what starts an agent's function without the user asking (cron, webhook, input, event)."""
