"""The notes agent: notes and saved articles, tagged and searchable, in its own database."""
