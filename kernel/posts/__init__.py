"""The user's feed: what agents post (`ctx.post`) for the person to read."""
