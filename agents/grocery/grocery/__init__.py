"""The grocery agent: keeps the user's shopping list in its own database."""
