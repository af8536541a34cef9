"""The pages. Each reads through the kernel services the API's handlers call (never a
handler itself), acting as the signed-in user; every change a page makes is a fetch of /v1
from its script."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.agentdb.query import query_agent
from dreamer.kernel.audit import reads as audit_reads
from dreamer.kernel.core import Kernel
from dreamer.kernel.feedback.ratings import ratings_of_invocations
from dreamer.kernel.install.views import installed_agent, installed_agents
from dreamer.kernel.invocations import reads as invocation_reads
from dreamer.kernel.invocations.principal import Principal
from dreamer.kernel.learned import examples
from dreamer.kernel.posts.feed import feed as read_feed
from dreamer.kernel.users.sessions import list_sessions
from dreamer.kernel.users.signin_guard import SignInRefused
from dreamer.web.auth import (
    from_localhost, login_cookie, login_token, page_session, principal_of, set_session_cookie, sign_in, sign_out,
)
from dreamer.web.render import _plain, page
from dreamer.web.wording import group_runs

router = APIRouter(include_in_schema=False)
log = logging.getLogger("dreamer.web")


def _kernel(request: Request) -> Kernel:
    return request.app.state.kernel


def _safe_next(target: str | None) -> str:
    # Only a path on this site: "//evil.example" or "https://..." would leave it.
    return target if target and target.startswith("/") and not target.startswith("//") and "\\" not in target else "/"


@router.get("/login", response_class=HTMLResponse)
def login_page(request: Request, next: str = "/") -> Response:
    token = login_token(request)
    response = page(request, "login.html", None, csrf=token, next=_safe_next(next), error=None,
                    local=from_localhost(request))
    login_cookie(response, request, token)
    return response


@router.post("/login", response_class=HTMLResponse)
async def login(request: Request, next: str = "/") -> Response:
    try:
        signed_in, error, secret = await sign_in(request)
    except SignInRefused as refused:
        token = login_token(request)
        response = page(request, "login.html", None, csrf=token, next=_safe_next(next), error=refused.message,
                        local=from_localhost(request))
        response.status_code = 429
        response.headers["Retry-After"] = str(max(1, round(refused.retry_after)))
        login_cookie(response, request, token)
        return response
    if signed_in is None:
        token = login_token(request)
        response = page(request, "login.html", None, csrf=token, next=_safe_next(next), error=error,
                        local=from_localhost(request))
        response.status_code = 403 if "expired" in (error or "") else 401
        login_cookie(response, request, token)
        return response
    response = RedirectResponse(_safe_next(next), status_code=303)
    set_session_cookie(response, request, secret)
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    if not await sign_out(request):
        return page(request, "error.html", None, title="Not signed out",
                    message="The sign-out form lacked this session's CSRF token. Reload the page and try again.",
                    status=403)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie("dreamer_session", path="/")
    return response


@router.get("/", response_class=HTMLResponse)
def chat_new(request: Request) -> Response:
    return _chat(request, None)


@router.get("/chat/{conversation_id}", response_class=HTMLResponse)
def chat_conversation(request: Request, conversation_id: str) -> Response:
    return _chat(request, conversation_id)


def _chat(request: Request, conversation_id: str | None) -> Response:
    who = page_session(request)
    k, p = _kernel(request), principal_of(who)
    conversation: dict[str, Any] | None = None
    if conversation_id:
        conversation = k.chat_service().conversation(p, conversation_id)
    model = k.invoker.llm.describe() if getattr(k.invoker, "llm", None) is not None else {"available": False}
    return page(
        request, "chat.html", who,
        conversations=k.chat_service().conversations(p, 30, 0, None), conversation=conversation,
        offline=not model.get("available"), examples=_examples(k, p),
    )


def _examples(k: Kernel, p: Principal) -> list[str]:
    """A few things to try, taken from the user's agents' own examples (no templates with slots)."""
    found: list[str] = []
    for agent in installed_agents(k.store, p.user_id):
        for fn in agent["functions"]:
            plain = _plain(fn.get("examples", []))
            if fn["exported"] and plain and not fn["confirm"]:
                found.append(plain[0])
    return found[:4]


@router.get("/agents", response_class=HTMLResponse)
def agents_page(request: Request) -> Response:
    who = page_session(request)
    return page(request, "agents.html", who, agents=installed_agents(_kernel(request).store, principal_of(who).user_id))


@router.get("/agents/{agent}", response_class=HTMLResponse)
def agent_page(request: Request, agent: str) -> Response:
    who = page_session(request)
    k, p = _kernel(request), principal_of(who)
    return page(request, "agent.html", who, agent=installed_agent(k.store, p.user_id, agent),
                permissions=k.installer.permissions(p, agent))


DATA_ROWS = 100


@router.get("/agents/{agent}/data", response_class=HTMLResponse)
async def agent_data_page(request: Request, agent: str, table: str | None = None) -> Response:
    """A read-only look at the agent's own database (what `dreamer database` shows, for people)."""
    who = page_session(request)
    k, p = _kernel(request), principal_of(who)
    about = installed_agent(k.store, p.user_id, agent)
    listed = await _read(k, p, agent,
                         "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    tables = [row[0] if isinstance(row, list) else row.get("name") for row in listed.get("rows", [])]
    shown = None
    table = table if table is not None else (tables[0] if tables else None)
    if table is not None:
        if table not in tables:  # only names the database itself listed reach the SQL below
            raise DreamerError("not_found", f"{agent} has no table named {table!r}")
        quoted = '"' + table.replace('"', '""') + '"'
        shown = await _read(k, p, agent, f"SELECT * FROM {quoted} LIMIT {DATA_ROWS}")
    return page(request, "agent_data.html", who, agent=about, tables=tables, table=table, shown=shown,
                limit=DATA_ROWS)


async def _read(k: Kernel, p: Principal, agent: str, query: str) -> dict[str, Any]:
    return await query_agent(k.store, k.installer.sandbox, k.settings, p, agent, query, write=False)


@router.get("/install", response_class=HTMLResponse)
def install_page(request: Request) -> Response:
    who = page_session(request)
    return page(request, "install.html", who, galleries=_kernel(request).settings.galleries)


@router.get("/permissions", response_class=HTMLResponse)
def permissions_page(request: Request) -> Response:
    who = page_session(request)
    rows = _kernel(request).installer.permissions(principal_of(who), None)
    by_agent: dict[str, list[dict[str, Any]]] = {}
    by_scope: dict[str, dict[str, Any]] = {}
    for row in rows:
        by_agent.setdefault(row["agent"], []).append(row)
        if row["granted"]:
            holder = by_scope.setdefault(row["scope"], {"sentence": row["sentence"], "risk": row["risk"], "agents": []})
            holder["agents"].append(row["agent"])
    return page(request, "permissions.html", who, by_agent=by_agent, by_scope=dict(sorted(by_scope.items())))


@router.get("/feed", response_class=HTMLResponse)
def feed_page(request: Request, agent: str | None = None) -> Response:
    """What the user's agents posted (ctx.post), newest first; urgent posts stand out."""
    who = page_session(request)
    posts = read_feed(_kernel(request).store, principal_of(who).user_id, 100, agent)
    return page(request, "feed.html", who, posts=posts, agent=agent)


ACTIVITY_PAGE = 25
OUTCOMES = ("succeeded", "failed", "running", "queued", "cancelled")


@router.get("/activity", response_class=HTMLResponse)
def activity_page(
    request: Request, agent: str | None = None, outcome: str | None = None, shown: str = Query("1", alias="page")
) -> Response:
    """What ran, a page at a time, by agent and outcome; the audit chain is checked only on demand."""
    who = page_session(request)
    k, p = _kernel(request), principal_of(who)
    agent = agent or None
    outcome = outcome if outcome in OUTCOMES else None
    page_no = max(1, min(int(shown), 10_000)) if shown.isdigit() else 1
    runs = invocation_reads.list_invocations(
        k.store, p, k.chat, agent, ACTIVITY_PAGE + 1, outcome, (page_no - 1) * ACTIVITY_PAGE
    )
    installed = installed_agents(k.store, p.user_id)
    with k.store.session() as s:  # the user's own thumbs up/down, to show the buttons pressed
        rated = ratings_of_invocations(s, p.user_id, [r["id"] for r in _all_runs(runs[:ACTIVITY_PAGE])])
    return page(request, "activity.html", who, groups=group_runs(runs[:ACTIVITY_PAGE], _functions(installed)),
                more=len(runs) > ACTIVITY_PAGE, page_no=page_no, agent=agent, outcome=outcome, outcomes=OUTCOMES,
                agents=sorted(a["name"] for a in installed), audit=audit_reads.entries(k.store, p, 20, agent),
                rated={key: "up" if value > 0 else "down" for key, value in rated.items()})


def _all_runs(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs and the calls they made, however deep."""
    out: list[dict[str, Any]] = []
    for run in runs:
        out.append(run)
        out.extend(_all_runs(run.get("children") or []))
    return out


def _functions(installed: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """"agent.function" -> its entry (description, reply templates): how its results read."""
    return {f"{a['name']}.{f['name']}": f for a in installed for f in a["functions"]}


@router.get("/activity/{invocation_id}", response_class=HTMLResponse)
def invocation_page(request: Request, invocation_id: str) -> Response:
    who = page_session(request)
    k, p = _kernel(request), principal_of(who)
    run = invocation_reads.invocation(k.store, p, invocation_id, k.flush_traces)
    try:
        functions = _functions([installed_agent(k.store, p.user_id, run["agent"])])
    except DreamerError:  # uninstalled since: the run reads as what was asked
        functions = {}
    with k.store.session() as s:
        rated = ratings_of_invocations(s, p.user_id, [run["id"]]).get(run["id"])
    rating = None if rated is None else ("up" if rated > 0 else "down")
    audit = audit_reads.entries(k.store, p, 200, None, run["id"])  # what this run was allowed and refused
    return page(request, "invocation.html", who, run=run, functions=functions, rating=rating, audit=audit)


LEARNED_FROM = {"picked": "your pick of an option", "passed over": "an option you passed over",
                "corrected": "your correction", "rephrased": "you saying it again", "undone": "your undo",
                "thumbs down": "your thumbs down", "thumbs up": "your thumbs up"}


@router.get("/learned", response_class=HTMLResponse)
def learned_page(request: Request) -> Response:
    """What Sidekick learned from the user's corrections: forget any of it, turn learning off."""
    who = page_session(request)
    k, p = _kernel(request), principal_of(who)
    return page(request, "learned.html", who, examples=[x.to_dict() for x in examples.list_learned(k.store, p.user_id)],
                learning=examples.learning_enabled(k.store, p.user_id), sources=LEARNED_FROM)


@router.get("/account", response_class=HTMLResponse)
def account_page(request: Request) -> Response:
    who = page_session(request)
    return page(request, "account.html", who, sessions=list_sessions(_kernel(request).store, principal_of(who).user_id))


# What a person reads for each kind of failure; the kernel's own sentence is folded below it.
_IN_WORDS = {
    404: ("We couldn't find that page", "There is nothing at this address: it may have been deleted, or the link may be mistyped."),
    403: ("That isn't yours to open", "Your account may not see or change this. Sign in as its owner, or go back."),
    409: ("That changed meanwhile", "Something else changed it while you were here. Reload the page and try again."),
}
_SOMETHING_WRONG = ("Something went wrong", "This page could not be shown just now. Try again in a moment; if it keeps "
                    "happening, let whoever looks after this dreamer know: what went wrong is in its log.")


def error_page(request: Request, exc: DreamerError) -> Response:
    who = getattr(request.state, "web_session", None)
    title, message = _IN_WORDS.get(exc.status, _SOMETHING_WRONG if exc.status >= 500 else
                                   ("That didn't work", "The request was refused; the reason is below."))
    # A refusal's own sentence helps the person who asked ("grocery has no table named 'x'"); a
    # failure's is for whoever runs the kernel (it may name commands and internals): logged, not shown.
    if exc.status >= 500 and exc.message:
        log.warning("the page %s failed: %s", request.url.path[:200], exc.message)
    detail = exc.message if exc.status < 500 else None
    return page(request, "error.html", who, title=title, message=message, detail=detail, status=exc.status)
