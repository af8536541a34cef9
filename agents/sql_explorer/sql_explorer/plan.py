"""What a question compiles to: a Plan over the semantic model (turned into SQL by sqlbuild and
into a sentence by answer), a Choice when a name fits several values, or Unplaced."""

from __future__ import annotations

from dataclasses import dataclass, field

from dreamer.sdk.semantic import Dimension, Entity

from sql_explorer.timeframe import Range

PERSON_GROUP = "employee"  # a grouping by person (who...)


@dataclass(frozen=True)
class TimeGroup:
    """A grouping by the counted thing's date: "per month" (YYYY-MM) or "per year" (YYYY)."""

    unit: str  # "month" | "year"

    @property
    def width(self) -> int:
        return 7 if self.unit == "month" else 4


Group = Dimension | str | TimeGroup  # a dimension, PERSON_GROUP, or a time unit


def group_name(group: Group) -> str:
    """How an answer names a grouping: "department", "person", "month"."""
    if isinstance(group, Dimension):
        return group.words[0] if group.words else group.name.replace("_", " ")
    if isinstance(group, TimeGroup):
        return group.unit
    return "person"


@dataclass
class Filter:
    dimension: Dimension
    code: str
    said: str


@dataclass
class Plan:
    """What to compute."""

    entity: Entity
    count: str = "rows"  # rows | people | number
    number: str | None = None  # numeric column name when count == "number"
    agg: str = "count"  # count | avg | sum | min | max
    filters: list[Filter] = field(default_factory=list)
    range: Range | None = None
    groups: list[Group] = field(default_factory=list)  # at most two
    order: str | None = None  # "max" | "min": keep the best `limit` groups
    limit: int | None = None
    exact: bool = False  # the user said how many ("top 5"): exactly that many, ties or not
    # Conditions on the number (salary > 90000), on each person's count (> 3 absences) or on each
    # group's measure (departments with fewer than 12 employees); several are ANDed (between).
    compare: list[tuple[str, float]] = field(default_factory=list)
    compare_on: str | None = None  # "number" | "per_person" | "per_group"
    count_groups: bool = False  # "how many departments have ...": the number of groups that qualify
    show_query: bool = False

    @property
    def group(self) -> Group | None:
        return self.groups[0] if self.groups else None


@dataclass
class Choice:
    """A name fits several values: which did the user mean?"""

    dimension: str
    said: str
    options: list[tuple[str, str]]  # (code, name)


@dataclass
class Unplaced:
    """The question has a part the model does not cover, or asks about the asker: the sentence says which."""

    reason: str
    about_asker: bool = False
