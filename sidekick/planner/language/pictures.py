"""The characters of pictures said in a message (emoji), as regular-expression class contents.

One place for them: the spoken form ends a sentence at a picture between words (spoken.as_written), and
values drop a picture said after a value and read a tick after a thing as "done" (values.tidy_text).
"""

from __future__ import annotations

PICTURES = "\\u2600-\\u27bf\\U0001F000-\\U0001FAFF"  # symbols, dingbats, and the emoji planes
JOINERS = "\\ufe0f\\u200d"  # the variation selector and the zero-width joiner that build one picture of several
TICKS = "\\u2705\\u2714\\u2611\\u2713"  # ✅ ✔ ☑ ✓: said after a thing, it is done
CROSSES = "\\u274c\\u2716\\U0001F44D"  # ❌ ✖ and 👍: words too, never the end of a sentence
