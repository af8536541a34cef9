"""The kernel store: who the users are, what they installed, what they granted,
what ran, and the audit chain. SQLAlchemy 2 declarative models; Alembic owns the schema.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from dreamer.contracts.database import NAMING_CONVENTION as NAMING_CONVENTION
from dreamer.contracts.database import utcnow as utcnow




# Named constraints let later Alembic migrations (batch mode on SQLite) drop or
# alter them by name; unnamed ones get backend-chosen names that differ.


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    timezone: Mapped[str] = mapped_column(String(64), default="UTC")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # argon2id hash for signing in to the web app; None: no password set (kernel/users/passwords.py).
    password_hash: Mapped[str | None] = mapped_column(String(255), nullable=True)
    # The user asked that nothing of theirs leave in a training export (kernel/tracing/export).
    export_opt_out: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # False: Sidekick keeps nothing from this user's corrections and ratings (kernel/learned).
    learning: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())


class WebSession(Base):
    """A signed-in browser. The cookie holds a secret whose sha256 is kept here, so a
    leaked store does not leak sessions; deleting the row signs the browser out at once."""

    __tablename__ = "web_sessions"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)  # public id, for listing and revoking
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    csrf: Mapped[str] = mapped_column(String(64))
    how: Mapped[str] = mapped_column(String(16))  # password | localhost
    user_agent: Mapped[str] = mapped_column(String(300), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ApiToken(Base):
    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    # Only the sha256 of a token is kept: a leaked store does not leak tokens.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    label: Mapped[str] = mapped_column(String(100), default="cli")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class BundleVersion(Base):
    """An agent bundle copied into $DREAMER_HOME/bundles/NAME/VERSION-DIGEST.

    Keyed by content: two uploads of `diary 1.0.0` with different files are two rows and
    two folders, so no upload can replace or shadow code another user runs or may roll
    back to (a row and its folder are never changed once written)."""

    __tablename__ = "bundle_versions"
    __table_args__ = (UniqueConstraint("name", "version", "digest"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), index=True)
    version: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(16))
    digest: Mapped[str] = mapped_column(String(64))
    publisher: Mapped[str] = mapped_column(String(64))
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON)
    functions: Mapped[list[Any]] = mapped_column(JSON)
    path: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Installation(Base):
    """One user's installed agent: which bundle version runs for them."""

    __tablename__ = "installations"
    __table_args__ = (UniqueConstraint("user_id", "agent"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    agent: Mapped[str] = mapped_column(String(64))
    bundle_id: Mapped[int] = mapped_column(ForeignKey("bundle_versions.id"))
    installed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # Set when this user installed it from a gallery with a verified signature: the
    # gallery's URL and the fingerprint of the publisher key that signed it. Kept per
    # installation (migration 0012): another user installing the same bundle changes
    # neither this user's "verified" mark nor the key pinned for them.
    source: Mapped[str | None] = mapped_column(Text, nullable=True)
    publisher_fingerprint: Mapped[str | None] = mapped_column(String(64), nullable=True)


class Grant(Base):
    __tablename__ = "grants"
    __table_args__ = (UniqueConstraint("user_id", "agent", "scope"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    agent: Mapped[str] = mapped_column(String(64), index=True)
    scope: Mapped[str] = mapped_column(String(1100))
    granted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Invocation(Base):
    __tablename__ = "invocations"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    agent: Mapped[str] = mapped_column(String(64), index=True)
    function: Mapped[str] = mapped_column(String(64))
    args: Mapped[dict[str, Any]] = mapped_column(JSON)
    # "user" for a direct call, else the calling agent's name.
    caller: Mapped[str] = mapped_column(String(64))
    parent_id: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)
    # No index of its own: ix_invocations_queue below starts with status (migration 0020).
    status: Mapped[str] = mapped_column(String(16), default="queued")
    result: Mapped[object | None] = mapped_column(JSON, nullable=True)
    error_code: Mapped[str | None] = mapped_column(String(32), nullable=True)
    error_message: Mapped[str | None] = mapped_column(Text, nullable=True)
    attempt: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    trace_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # Background invocations wait in this table (status "queued") until the runner takes them.
    background: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    max_attempts: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    run_after: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)  # retry backoff
    # What started it when a trigger did: {"type", "name", "depth"}.
    trigger: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    # The cluster node running the current attempt (None on a single-node kernel): a dead
    # node's attempts are found by it (kernel/cluster/sweeper.py).
    node: Mapped[str | None] = mapped_column(String(64), nullable=True, index=True)

    # The fair-share scheduler's reads (kernel/runs/queue.py `due`): queued rows grouped
    # by (user, agent), oldest first, by index alone however long one user's backlog is.
    __table_args__ = (Index("ix_invocations_queue", "status", "user_id", "agent", "created_at", "id", "run_after"),)


class InvocationLog(Base):
    __tablename__ = "invocation_logs"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    invocation_id: Mapped[str] = mapped_column(String(40), index=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    stream: Mapped[str] = mapped_column(String(16))  # stderr | log
    level: Mapped[str] = mapped_column(String(16), default="info")
    message: Mapped[str] = mapped_column(Text)


class AuditEntry(Base):
    """Append-only and hash-chained: each row's hash covers its fields and the previous hash."""

    __tablename__ = "audit_log"

    seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    user_id: Mapped[int | None] = mapped_column(Integer, nullable=True, index=True)
    actor: Mapped[str] = mapped_column(String(100))  # "user:me", "agent:recipes", "admin:me as bob"
    action: Mapped[str] = mapped_column(String(64))  # agents.call, grants.revoke, install, ...
    target: Mapped[str] = mapped_column(String(200))
    scope: Mapped[str | None] = mapped_column(String(1100), nullable=True)
    decision: Mapped[str] = mapped_column(String(8))  # allow | deny
    detail: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    invocation_id: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64), unique=True)


class Span(Base):
    """OpenTelemetry spans, written by the kernel's own exporter.

    Keyed in the order they are written (`id`) and found by their trace: (trace_id, span_id)
    is a span's identity in OpenTelemetry, so the span id has no random b-tree of its own for
    every batch of spans to dirty a page of per span. The kernel's trace ids and invocation ids
    begin with their time, so the two indexes grow at their right edge too (decision 0055)."""

    __tablename__ = "spans"
    __table_args__ = (Index("ix_spans_trace_id_span_id", "trace_id", "span_id", unique=True),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    span_id: Mapped[str] = mapped_column(String(16))
    trace_id: Mapped[str] = mapped_column(String(32))
    parent_span_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
    name: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16))
    start_ns: Mapped[int] = mapped_column(BigInteger)
    end_ns: Mapped[int] = mapped_column(BigInteger)
    duration_ms: Mapped[float] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(16))
    attributes: Mapped[dict[str, Any]] = mapped_column(JSON)
    invocation_id: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)


class LlmUsage(Base):
    """One model call: its tokens and cost, for accounting and the per-user budget."""

    __tablename__ = "llm_usage"
    # The budget check sums one user's cost since a date: this index serves it.
    __table_args__ = (Index("ix_llm_usage_user_id_at", "user_id", "at"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    agent: Mapped[str | None] = mapped_column(String(64), nullable=True)  # None: Sidekick itself
    provider: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    input_tokens: Mapped[int] = mapped_column(Integer, default=0)
    output_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cache_read_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cache_write_tokens: Mapped[int] = mapped_column(Integer, default=0)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    invocation_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ModelRequest(Base):
    """What one model call asked and answered, for the training export (issue 20).

    `invocation_id` is the agent invocation that made the call; `turn_key` the Sidekick
    turn (its answer's chat_messages.data["rollout_key"]) when Sidekick's own planner made it:
    the answer's id does not exist yet while the turn's model calls are made. Kept as
    the gateway saw it; secrets are taken out when it is exported, not here."""

    __tablename__ = "model_requests"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    invocation_id: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)
    turn_key: Mapped[str | None] = mapped_column(String(40), nullable=True, index=True)
    span_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
    trace_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    provider: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    request: Mapped[dict[str, Any]] = mapped_column(JSON)
    response: Mapped[dict[str, Any]] = mapped_column(JSON)
    latency_ms: Mapped[float] = mapped_column(Float)
    usage: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    finish_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)
    status: Mapped[str] = mapped_column(String(8))  # ok | error
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Conversation(Base):
    """A conversation with Sidekick; `pending` holds the question it is waiting on."""

    __tablename__ = "conversations"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    title: Mapped[str] = mapped_column(String(200), default="")
    pending: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ChatMessage(Base):
    __tablename__ = "chat_messages"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(16))  # user | assistant
    content: Mapped[str] = mapped_column(Text)
    # For the assistant: the calls it made ({agent, function, args, ok, result | error}) and any question.
    data: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Memory(Base):
    """A fact or preference Sidekick keeps for one user ("I'm vegetarian").

    `key` is the sha256 of the fact's normalized wording, so telling Sidekick the
    same thing twice (in other capitals, with "I am" for "I'm") keeps one row.
    """

    __tablename__ = "memories"
    __table_args__ = (UniqueConstraint("user_id", "key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    text: Mapped[str] = mapped_column(Text)
    key: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(80))  # "user" | "agent:<name>"
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Post(Base):
    """A message an agent put in its user's feed (`ctx.post`)."""

    __tablename__ = "posts"
    __table_args__ = (Index("ix_posts_user_id_created_at", "user_id", "created_at"),)

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    agent: Mapped[str] = mapped_column(String(64))
    text: Mapped[str] = mapped_column(Text)
    priority: Mapped[str] = mapped_column(String(16))  # normal | urgent
    attachments: Mapped[list[Any]] = mapped_column(JSON, default=list)
    invocation_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Trigger(Base):
    """One user's copy of a trigger an installed agent declares in agent.yaml.

    `schedule` is the user's own cron schedule (None: the manifest's `default_schedule`);
    `token` makes a webhook's URL; `secret` (set by the user) turns on signature checks.
    """

    __tablename__ = "triggers"
    __table_args__ = (UniqueConstraint("user_id", "agent", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    agent: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(100))
    type: Mapped[str] = mapped_column(String(16))  # cron | webhook | input | event
    entrypoint: Mapped[str] = mapped_column(String(64))
    schedule: Mapped[str | None] = mapped_column(String(200), nullable=True)
    default_schedule: Mapped[str | None] = mapped_column(String(200), nullable=True)
    paused: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    token: Mapped[str | None] = mapped_column(String(64), nullable=True, unique=True)
    secret: Mapped[str | None] = mapped_column(String(200), nullable=True)
    event: Mapped[str | None] = mapped_column(String(200), nullable=True, index=True)
    content_types: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DataConnection(Base):
    """A database an administrator connected for the sql-explorer (issue 6).

    `url` holds the credentials and never leaves the kernel; `scopes` is the YAML
    text of the role scopes file and `scopes_version` its version (only a higher
    version replaces it); `secrets` holds what the kernel made for the engine layer
    (the PostgreSQL reader role and its password).
    """

    __tablename__ = "data_connections"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    url: Mapped[str] = mapped_column(Text)
    schema_name: Mapped[str] = mapped_column(String(128))
    description: Mapped[str] = mapped_column(Text, default="")
    scopes: Mapped[str] = mapped_column(Text, default="")
    scopes_version: Mapped[int] = mapped_column(Integer, default=0)
    secrets: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ToolBundle(Base):
    """A tool bundle (an MCP server plus skills) copied into $DREAMER_HOME/tool-bundles/NAME/VERSION-DIGEST.

    Tools have their own namespace: a tool `calendar` and an agent `calendar` may both exist."""

    __tablename__ = "tool_bundles"
    __table_args__ = (UniqueConstraint("name", "version", "digest"),)  # keyed by content, as BundleVersion

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), index=True)
    version: Mapped[str] = mapped_column(String(64))
    digest: Mapped[str] = mapped_column(String(64))
    publisher: Mapped[str] = mapped_column(String(64))
    manifest: Mapped[dict[str, Any]] = mapped_column(JSON)
    tools: Mapped[list[Any]] = mapped_column(JSON)  # as listed at install: name, description, input_schema, annotations
    skills: Mapped[list[Any]] = mapped_column(JSON)  # name, description, body
    path: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ToolInstallation(Base):
    """One user's installed tool server, the tools they switched off, and the headers the
    kernel sends to a remote server for them (secrets live here, never in the bundle)."""

    __tablename__ = "tool_installations"
    __table_args__ = (UniqueConstraint("user_id", "server"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    server: Mapped[str] = mapped_column(String(64))
    bundle_id: Mapped[int] = mapped_column(ForeignKey("tool_bundles.id"))
    disabled: Mapped[list[Any]] = mapped_column(JSON, default=list)
    headers: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    installed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Reward(Base):
    """How well an invocation or a Sidekick answer went: as its agent judged it
    (`ctx.emit_reward(value, note)`, source "agent") or as the user rated it (a thumbs
    up/down with an optional note, source "user", kernel/feedback)."""

    __tablename__ = "rewards"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    # None: a rating of a Sidekick answer that made no call (turn_id says which).
    invocation_id: Mapped[str | None] = mapped_column(String(40), index=True, nullable=True)
    source: Mapped[str] = mapped_column(String(16), default="agent", server_default="agent")
    # The Sidekick answer (an assistant chat message id) a user's rating was given on.
    turn_id: Mapped[int | None] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), index=True,
                                                nullable=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    agent: Mapped[str] = mapped_column(String(64))
    value: Mapped[float] = mapped_column(Float)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ChainRun(Base):
    """How many runs one chain of events has set off (kernel/triggers/chains.py).

    A chain is named by the invocation that started it. Kept in the store, not in a
    kernel's memory, so a restart or another node does not hand a runaway chain a
    fresh budget; rows a day old are pruned.
    """

    __tablename__ = "chain_runs"

    chain: Mapped[str] = mapped_column(String(40), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    runs: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)


class LearnedExample(Base):
    """A phrasing one user taught Sidekick by picking an option ("add bread" -> grocery.add_items).

    `key` is the phrasing normalized (kernel/learned/examples.py); weight > 0 routes the
    phrasing to the function directly, < 0 (a demoted choice) keeps it from doing so.
    Rows belong to one user: routing for anyone else never reads them.
    """

    __tablename__ = "learned_examples"
    __table_args__ = (UniqueConstraint("user_id", "key", "agent", "function"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    key: Mapped[str] = mapped_column(String(500))
    phrase: Mapped[str] = mapped_column(Text)
    agent: Mapped[str] = mapped_column(String(64))
    function: Mapped[str] = mapped_column(String(64))
    args: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    weight: Mapped[float] = mapped_column(Float, default=1.0)
    source: Mapped[str] = mapped_column(String(32), default="picked")
    # An administrator promoted it: it routes every user's messages (their own rows still win).
    everyone: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false(), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ClusterNode(Base):
    """One kernel process of an installation that runs several (kernel/cluster/)."""

    __tablename__ = "cluster_nodes"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    advertise: Mapped[str] = mapped_column(String(300))  # the URL other nodes and the load balancer reach it at
    pid: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    heartbeat_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    stopped_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # `dreamer nodes drain`: the node fails its health check and takes no new background work.
    draining: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The newest cluster event this node has applied to its caches (ClusterEvent.id).
    applied_event: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")


class ClusterEvent(Base):
    """A change every node must apply to its in-memory state (a cache entry to drop, a
    revocation); the NOTIFY carries only the id, so a node that missed one reads it here."""

    __tablename__ = "cluster_events"

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    origin: Mapped[str] = mapped_column(String(64))
    kind: Mapped[str] = mapped_column(String(32))
    body: Mapped[dict[str, Any]] = mapped_column(JSON)


class ClusterSecret(Base):
    """Keys every node must share (the sign-in form's CSRF key), made once by whichever node starts first."""

    __tablename__ = "cluster_secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class CronFire(Base):
    """One row per cron tick that fired: a new leader that replays a tick the old one already
    queued finds its row and does not queue it twice."""

    __tablename__ = "cron_fires"

    trigger_id: Mapped[int] = mapped_column(ForeignKey("triggers.id", ondelete="CASCADE"), primary_key=True)
    scheduled_for: Mapped[datetime] = mapped_column(DateTime(timezone=True), primary_key=True)
    invocation_id: Mapped[str | None] = mapped_column(String(40), nullable=True)
    node: Mapped[str | None] = mapped_column(String(64), nullable=True)


class UserLease(Base):
    """Which cluster node may run a user's warm workers and open their agent files
    (kernel/cluster/leases.py). `fence` grows by one on every take-over, so a forwarded
    request or a renewal carrying an older one is refused; `expires_at` is on the
    database's clock. A released lease keeps its row (expired) so the fence never goes back."""

    __tablename__ = "user_leases"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    node: Mapped[str] = mapped_column(String(64), index=True)
    fence: Mapped[int] = mapped_column(BigInteger, default=1)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
