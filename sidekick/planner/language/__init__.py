"""Reading everyday English: words, stems, synonyms, typos, numbers, days and typed values.

Shared by the offline planner (matching) and the dialog (reading answers).
"""
