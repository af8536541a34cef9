"""The calendar agent: events, a day's agenda, and a briefing that gathers notes and groceries.

The package is calendar_agent, not calendar: a bundle's packages share
sys.path with the standard library, whose calendar module must stay reachable.
"""
