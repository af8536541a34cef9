"""A small client of the kernel's HTTP API (docs/ARCHITECTURE.md, "HTTP API").

Every method returns the parsed JSON answer or raises CLIError with the
kernel's code and sentence, so commands never see httpx or a status code.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

CALL_TIMEOUT_S = 120.0
CONNECT_TIMEOUT_S = 5.0


def tls_for(url: str) -> ssl.SSLContext | bool:
    """httpx's `verify` for a client of `url`. For https, httpx's default: the system's certificates.
    For plain http no TLS is spoken, and loading the certificates (what every httpx client does when
    made, used or not) was 40 ms of CPU in each CLI process; a context without any is made in
    microseconds, and as it still requires verification no https connection can succeed through it
    (these clients follow no redirects either)."""
    if urlsplit(url).scheme.lower() == "http":
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    return True


class CLIError(Exception):
    """A failure the CLI reports as one sentence (or {"error": {...}} with --json)."""

    def __init__(self, code: str, message: str, exit_code: int = 1, status: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.exit_code = exit_code
        self.status = status

    def to_dict(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}


def unreachable(url: str) -> CLIError:
    return CLIError("kernel_unreachable", f"No dreamer kernel answers at {url}; start one with `dreamer up`.")


def _seg(value: str) -> str:
    # Names are validated by the kernel; quoting keeps a hostile one from changing the path.
    return quote(value, safe="")


def error_from_response(response: httpx.Response) -> CLIError:
    """The kernel's {"error": {"code", "message"}}, or the best sentence we can make of anything else."""
    status = response.status_code
    try:
        body: Any = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
        body = None
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            code = err.get("code") if isinstance(err.get("code"), str) else f"http_{status}"
            return CLIError(code, err["message"], status=status)
        detail = body.get("detail")
        if isinstance(detail, str):
            return CLIError(f"http_{status}", detail, status=status)
        if isinstance(detail, list) and detail and isinstance(detail[0], dict):
            first = detail[0]
            where = ".".join(str(p) for p in first.get("loc", []))
            return CLIError("invalid_request", f"the kernel rejected the request: {where}: {first.get('msg', '')}", status=status)
    text = response.text.strip().splitlines()[0][:200] if response.text.strip() else response.reason_phrase
    return CLIError(f"http_{status}", f"The kernel answered HTTP {status}: {text}", status=status)


class Client:
    """One connection to a kernel, with the caller's token and optional `--user`."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        act_as: str | None = None,
        timeout: float = CALL_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.has_token = bool(token)
        headers = {"User-Agent": "dreamer-cli", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if act_as:
            headers["X-Dreamer-User"] = act_as
        try:
            self._http = httpx.Client(
                base_url=self.url,
                headers=headers,
                timeout=httpx.Timeout(timeout, connect=CONNECT_TIMEOUT_S),
                transport=transport,
                trust_env=False,
                verify=tls_for(self.url),
            )
        except (httpx.InvalidURL, ValueError) as exc:
            raise CLIError("invalid_argument", f"DREAMER_URL is not a usable http URL ({self.url!r}): {exc}") from None

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- transport ---------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        content: bytes | None = None,
        content_type: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> Any:
        headers = {"Content-Type": content_type} if content_type else None
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            response = self._http.request(
                method, path, json=json_body, content=content, headers=headers, params=clean or None
            )
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise unreachable(self.url) from None
        except httpx.TimeoutException:
            raise CLIError("timeout", f"The kernel at {self.url} did not answer in time.") from None
        except httpx.UnsupportedProtocol:
            raise CLIError("invalid_argument", f"DREAMER_URL must start with http:// or https://, not {self.url!r}.") from None
        except (httpx.InvalidURL, httpx.TransportError) as exc:
            raise CLIError("kernel_unreachable", f"The connection to the kernel at {self.url} failed: {exc}") from None
        if response.status_code >= 400:
            err = error_from_response(response)
            if err.status == 401 and not self.has_token:
                err.message += " (no API token: set DREAMER_TOKEN, or start the kernel once with `dreamer up` to create $DREAMER_HOME/credentials)"
            raise err
        if not response.content:
            return None
        try:
            return response.json()
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
            raise CLIError("protocol_error", f"The kernel at {self.url} answered something that is not JSON.") from None

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params)

    def download(self, path: str, **params: Any) -> bytes:
        """A file the kernel sends (not JSON): its bytes; errors as for `request`."""
        clean = {k: v for k, v in params.items() if v is not None}
        try:
            response = self._http.request("GET", path, params=clean or None)
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise unreachable(self.url) from None
        except httpx.TimeoutException:
            raise CLIError("timeout", f"The kernel at {self.url} did not answer in time.") from None
        except (httpx.InvalidURL, httpx.TransportError) as exc:
            raise CLIError("kernel_unreachable", f"The connection to the kernel at {self.url} failed: {exc}") from None
        if response.status_code >= 400:
            raise error_from_response(response)
        return response.content

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, json_body=body)

    def put(self, path: str, body: Any = None) -> Any:
        return self.request("PUT", path, json_body=body)

    def delete(self, path: str, **params: Any) -> Any:
        return self.request("DELETE", path, params=params)

    # -- the API -------------------------------------------------------------

    def health(self) -> Any:
        return self.get("/healthz")

    def me(self) -> Any:
        return self.get("/v1/me")

    def users(self) -> Any:
        return self.get("/v1/users")

    def add_user(self, name: str) -> Any:
        return self.post("/v1/users", {"name": name})

    def set_password(self, name: str, password: str) -> Any:
        return self.request("PUT", f"/v1/users/{quote(name, safe='')}/password", json_body={"password": password})

    def build(self, archive: bytes) -> Any:
        return self.request("POST", "/v1/build", content=archive, content_type="application/gzip")

    def test_bundle(self, archive: bytes) -> Any:
        return self.request("POST", "/v1/test", content=archive, content_type="application/gzip")

    def stage_bundle(self, archive: bytes) -> Any:
        return self.request("POST", "/v1/bundles", content=archive, content_type="application/gzip")

    def install(self, bundle_id: Any, without: list[str], grant: list[str] | None = None) -> Any:
        return self.post("/v1/agents", {"bundle_id": bundle_id, "approve": True, "without": without, "grant": grant or []})

    def gallery_search(self, query: str, limit: int | None = None) -> Any:
        return self.get("/v1/gallery/search", q=query, limit=limit)

    def gallery_outdated(self) -> Any:
        return self.get("/v1/gallery/outdated")

    def gallery_install(self, name: str, version: str | None, accept_new_key: bool = False) -> Any:
        return self.post("/v1/gallery/install", {"name": name, "version": version, "accept_new_key": accept_new_key})

    def agents(self) -> Any:
        return self.get("/v1/agents")

    def agent(self, name: str) -> Any:
        return self.get(f"/v1/agents/{_seg(name)}")

    def uninstall(self, name: str, purge: bool) -> Any:
        return self.delete(f"/v1/agents/{_seg(name)}", purge=str(purge).lower())

    def call(self, agent: str, function: str, args: dict[str, Any], confirm: bool = False) -> Any:
        body: dict[str, Any] = {"args": args}
        if confirm:
            body["confirm"] = True
        return self.post(f"/v1/agents/{_seg(agent)}/functions/{_seg(function)}", body)

    def tools(self) -> Any:
        return self.get("/v1/tools")

    def call_tool(self, server: str, tool: str, args: dict[str, Any]) -> Any:
        return self.post(f"/v1/tools/{_seg(server)}/{_seg(tool)}", {"args": args})

    def switch_tool(self, server: str, tool: str, enabled: bool) -> Any:
        return self.request("PUT", f"/v1/tools/{_seg(server)}/{_seg(tool)}/enabled", json_body={"enabled": enabled})

    def set_tool_headers(self, server: str, headers: dict[str, str]) -> Any:
        return self.request("PUT", f"/v1/tools/{_seg(server)}/headers", json_body={"headers": headers})

    def permissions(self, agent: str | None = None) -> Any:
        return self.get("/v1/permissions", agent=agent)

    def grant(self, agent: str, scope: str) -> Any:
        return self.post(f"/v1/agents/{_seg(agent)}/grants", {"scope": scope})

    def revoke(self, agent: str, scope: str) -> Any:
        return self.delete(f"/v1/agents/{_seg(agent)}/grants", scope=scope)

    def database(self, agent: str, query: str, confirm: bool) -> Any:
        return self.post(f"/v1/agents/{_seg(agent)}/database", {"query": query, "confirm": confirm})

    def invocations(self, agent: str | None = None, limit: int | None = None) -> Any:
        return self.get("/v1/invocations", agent=agent, limit=limit)

    def invocation(self, invocation_id: str) -> Any:
        return self.get(f"/v1/invocations/{_seg(invocation_id)}")

    def audit(self, limit: int | None = None) -> Any:
        return self.get("/v1/audit", limit=limit)

    def audit_verify(self) -> Any:
        return self.get("/v1/audit/verify")

    def nodes(self) -> Any:
        return self.get("/v1/nodes")

    def drain_node(self, name: str) -> Any:
        return self.post(f"/v1/nodes/{_seg(name)}/drain", {})

    def chat(self, message: str, conversation_id: str | None = None) -> Any:
        return self.post("/v1/chat", {"message": message, "conversation_id": conversation_id, "stream": False})

    def chat_events(self, message: str, conversation_id: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Sidekick's answer as it streams: (event name, data) pairs."""
        body = {"message": message, "conversation_id": conversation_id, "stream": True}
        return self.events("POST", "/v1/chat", body)

    def events(self, method: str, path: str, body: Any = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """A server-sent event stream: (event name, data) pairs."""
        try:
            with self._http.stream(
                method, path, json=body, headers={"Accept": "text/event-stream"},
                timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT_S),
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    raise error_from_response(response)
                name = "message"
                for line in response.iter_lines():
                    if line.startswith("event:"):
                        name = line[6:].strip()
                    elif line.startswith("data:"):
                        try:
                            yield name, json.loads(line[5:])
                        except json.JSONDecodeError:
                            raise CLIError("protocol_error", "the kernel sent an event that is not JSON") from None
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise unreachable(self.url) from None
        except httpx.TimeoutException:
            raise CLIError("timeout", f"The kernel at {self.url} did not answer in time.") from None
        except httpx.RemoteProtocolError:
            raise CLIError("kernel_unreachable", f"The kernel at {self.url} closed the stream before it ended.") from None

    def export_traces(self, params: dict[str, Any]) -> Iterator[bytes]:
        """The training export as it streams: raw JSON-lines bytes, chunk by chunk."""
        clean = {k: v for k, v in params.items() if v is not None}
        try:
            with self._http.stream(
                "GET", "/v1/traces/export", params=clean, timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT_S),
            ) as response:
                if response.status_code >= 400:
                    response.read()
                    raise error_from_response(response)
                yield from response.iter_bytes()
        except (httpx.ConnectError, httpx.ConnectTimeout):
            raise unreachable(self.url) from None
        except httpx.TimeoutException:
            raise CLIError("timeout", f"The kernel at {self.url} did not answer in time.") from None
        except httpx.RemoteProtocolError:
            raise CLIError("kernel_unreachable", f"The kernel at {self.url} closed the export before it ended.") from None

    def export_setting(self, opt_out: bool | None = None) -> Any:
        if opt_out is None:
            return self.get("/v1/traces/export/setting")
        return self.request("PUT", "/v1/traces/export/setting", json_body={"opt_out": opt_out})

    def follow_logs(self, invocation_id: str) -> Iterator[tuple[str, dict[str, Any]]]:
        return self.events("GET", f"/v1/invocations/{_seg(invocation_id)}/logs")

    def cancel(self, invocation_id: str) -> Any:
        return self.post(f"/v1/invocations/{_seg(invocation_id)}/cancel")

    def feed(self, limit: int | None = None) -> Any:
        return self.get("/v1/feed", limit=limit)

    def clear_feed(self, agent: str | None = None) -> Any:
        return self.request("DELETE", "/v1/feed", params={"agent": agent})

    def triggers(self, agent: str | None = None) -> Any:
        return self.get("/v1/triggers", agent=agent)

    def trigger_run(self, agent: str, name: str) -> Any:
        return self.post(f"/v1/agents/{_seg(agent)}/triggers/{_seg(name)}/run")

    def trigger_update(self, agent: str, name: str, changes: dict[str, Any]) -> Any:
        return self.request("PATCH", f"/v1/agents/{_seg(agent)}/triggers/{_seg(name)}", json_body=changes)

    def share(self, body: dict[str, Any]) -> Any:
        return self.post("/v1/inputs", body)
