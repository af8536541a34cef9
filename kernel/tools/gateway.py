"""The MCP gateway: each user's exported agent functions and tools as one MCP server at /mcp.

Streamable HTTP (the mcp package's session manager, stateless, JSON answers), behind
the user's Bearer token, so Claude Desktop, Cursor or any MCP client can use a user's
agents. The token picks the user; every list and call is computed for that user only,
so one user's functions never appear to another. Stateless means no MCP session
outlives its request; a request still waiting on a slow call when its token is revoked
is cancelled at once and answered 401 (`while_valid`).

Names: an agent function is `agent.function`, a tool is `server.tool`. Agents and tool
servers have separate namespaces, so the two can collide; the function wins and the
tool is left out (the kernel logs it). Functions marked `confirm=True` (sending,
deleting, paying) are left out unless the user opted in (`PUT /v1/gateway`), because an
MCP client may call tools without asking anyone.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import mcp_types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Message, Receive, Scope, Send

from dreamer.contracts.errors import DreamerError
from dreamer.kernel.invocations.principal import Caller, Principal
from dreamer.kernel.tools.naming import qualified
from dreamer.kernel.tools.registry import Caller as ToolCaller
from dreamer.kernel.users.revocation import Credential, while_valid
from dreamer.kernel.users.accounts import bearer_user, hash_token

log = logging.getLogger("dreamer.tools")

PRINCIPAL_KEY = "dreamer.principal"


async def _refuse(send: Send, error: DreamerError) -> None:
    body = json.dumps(error.to_dict()).encode()
    await send({"type": "http.response.start", "status": error.status, "headers": [
        (b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="dreamer"')]})
    await send({"type": "http.response.body", "body": body})


def gateway_settings_path(users_dir: Path, user: str) -> Path:
    return users_dir / user / "gateway.json"


def read_gateway_settings(users_dir: Path, user: str) -> dict[str, Any]:
    try:
        data = json.loads(gateway_settings_path(users_dir, user).read_text())
    except (OSError, ValueError):
        return {"expose_confirm": False}
    return {"expose_confirm": data.get("expose_confirm") is True}


def write_gateway_settings(users_dir: Path, user: str, expose_confirm: bool) -> dict[str, Any]:
    path = gateway_settings_path(users_dir, user)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"expose_confirm": expose_confirm}))
    tmp.replace(path)
    return {"expose_confirm": expose_confirm}


class Gateway:
    def __init__(self, kernel: Callable[[], Any]) -> None:
        self._kernel = kernel  # the Kernel, read at request time (it is built in the app's lifespan)
        self.server: Server[Any] = Server(
            "dreamer", version="1", instructions="Your dreamer agents' functions (agent.function) and tools (server.tool).",
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
        )
        self.manager = StreamableHTTPSessionManager(app=self.server, stateless=True, json_response=True)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI endpoint at /mcp: authenticate, then hand over to the session manager."""
        if scope["type"] != "http":
            return
        found = self._principal(scope)
        if isinstance(found, DreamerError):
            await _refuse(send, found)
            return
        who, credential = found
        scope[PRINCIPAL_KEY] = who
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        k = self._kernel()
        finished = await while_valid(self.manager.handle_request(scope, receive, sending), k.revocations, k.store, credential)
        if not finished:
            log.info("an MCP request of %s ended: its token was revoked", who.user_name)
            if not started:
                await _refuse(send, DreamerError("unauthorized", "this API token was revoked while the request ran; sign in again or use another token"))
            else:  # a JSON answer is sent whole, so this is a body already begun: end it
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _principal(self, scope: Scope) -> tuple[Principal, Credential] | DreamerError:
        k = self._kernel()
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
        authorization = headers.get("authorization")
        try:
            user = bearer_user(k.tokens, k.store, authorization)
        except DreamerError as exc:
            return exc
        token = (authorization or "").partition(" ")[2].strip()
        return Principal(user.id, user.name, user.timezone), ("token", hash_token(token))

    # -- the MCP server's handlers ------------------------------------------------------

    def _who(self, ctx: Any) -> Principal:
        request = getattr(ctx, "request", None)
        who = request.scope.get(PRINCIPAL_KEY) if request is not None else None
        if not isinstance(who, Principal):
            raise DreamerError("unauthorized", "the MCP gateway could not tell who is asking")
        return who

    def catalogue(self, who: Principal) -> dict[str, tuple[str, Any, mcp_types.Tool]]:
        """name → (kind, target, Tool) for everything this user's MCP clients may call."""
        from dreamer.kernel.install.registry import list_installed

        k = self._kernel()
        expose_confirm = read_gateway_settings(k.settings.users_dir, who.user_name)["expose_confirm"]
        found: dict[str, tuple[str, Any, mcp_types.Tool]] = {}
        with k.store.session() as s:
            agents = list_installed(s, who.user_id)
        for agent in agents:
            for fn in agent.functions:
                if not fn.exported or (fn.confirm and not expose_confirm):
                    continue
                name = qualified(agent.name, fn.name)
                # functions.json promises an object schema (FunctionSpec checks it), never an empty one.
                schema = fn.parameters
                description = fn.description + (" (changes something: your MCP client should ask you first)" if fn.confirm else "")
                found[name] = ("function", (agent.name, fn.name), mcp_types.Tool(name=name, description=description, input_schema=schema))
        if k.tools is not None:
            for inst in k.tools.installed_all(who.user_id):
                for tool in inst.tools:
                    if tool["name"] in inst.disabled:
                        continue
                    name = qualified(inst.server, tool["name"])
                    if name in found:
                        log.warning("the MCP gateway leaves out the tool %s for %s: an agent function has that name", name, who.user_name)
                        continue
                    notes = tool.get("annotations") or {}
                    found[name] = ("tool", name, mcp_types.Tool(
                        name=name, description=tool.get("description", ""), input_schema=tool.get("input_schema") or {"type": "object"},
                        annotations=mcp_types.ToolAnnotations(**notes) if notes else None,
                    ))
        return found

    async def _list_tools(self, ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=[tool for _, _, tool in self.catalogue(self._who(ctx)).values()])

    async def _call_tool(self, ctx: Any, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
        who = self._who(ctx)
        k = self._kernel()
        entry = self.catalogue(who).get(params.name)
        args = dict(params.arguments or {})
        try:
            if entry is None:
                raise DreamerError("not_found", f"there is no function or tool named {params.name[:100]!r} here; list the tools to see yours")
            kind, target, _ = entry
            if kind == "function":
                agent, function = target
                # A confirm=True function is listed only when the user opted in to their MCP
                # client asking them (expose_confirm), so a call of a listed one is confirmed there.
                outcome = await k.invoker.invoke(who, agent, function, args, Caller("user", confirmed=True))
                value = outcome.value
            else:
                value = await k.tools.call(who.user_id, who.user_name, target, args, ToolCaller(actor=f"mcp client of {who.actor}"))
        except DreamerError as exc:
            return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=f"{exc.code}: {exc.message}")], is_error=True)
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        structured = value if isinstance(value, dict) else {"result": value}
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=text)], structured_content=structured)
