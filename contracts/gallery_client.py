"""A client of a gallery's HTTP API, shared by the CLI (publishing) and the kernel (installing).

Each method returns parsed JSON or raises DreamerError with the gallery's own code and
sentence. Uploads and downloads go in chunks through a `progress(done, total)` callback.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Self
from urllib.parse import quote

import httpx
from dreamer.contracts.gallery_upload import Upload
from dreamer.contracts.errors import DreamerError

Progress = Callable[[int, int], None]
CHUNK = 64 * 1024
# A gallery may be hostile too: a JSON answer larger than this is refused, not read.
MAX_JSON_BYTES = 8 * 1024 * 1024


def _seg(value: str) -> str:
    return quote(value, safe="")


class GalleryClient:
    def __init__(self, url: str, token: str | None = None, *, timeout: float = 60.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.url = url.rstrip("/")
        headers = {"User-Agent": "dreamer", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        try:
            self._http = httpx.Client(base_url=self.url, headers=headers, timeout=httpx.Timeout(timeout, connect=5.0),
                                      transport=transport, trust_env=False)
        except (httpx.InvalidURL, ValueError) as exc:
            raise DreamerError("invalid_argument", f"{url!r} is not a usable gallery URL: {exc}") from None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def _send(self, request: httpx.Request, stream: bool = False) -> httpx.Response:
        try:
            response = self._http.send(request, stream=stream)
        except httpx.UnsupportedProtocol:
            raise DreamerError("invalid_argument", f"a gallery URL must start with http:// or https://, not {self.url!r}") from None
        except httpx.TimeoutException:
            raise DreamerError("gallery_unreachable", f"the gallery at {self.url} did not answer in time") from None
        except httpx.HTTPError as exc:
            raise DreamerError("gallery_unreachable", f"no gallery answers at {self.url} ({type(exc).__name__})") from None
        if response.status_code >= 400:
            if stream:
                response.read()
            raise _error(response, self.url)
        return response

    def _json(self, method: str, path: str, **kw: Any) -> Any:
        response = self._send(self._http.build_request(method, path, **kw), stream=True)
        try:
            body = bytearray()
            for chunk in response.iter_bytes(CHUNK):
                body += chunk
                if len(body) > MAX_JSON_BYTES:
                    raise DreamerError("protocol_error", f"the gallery at {self.url} sent an answer over {MAX_JSON_BYTES} bytes; it was not read")
        except httpx.HTTPError as exc:
            raise DreamerError("gallery_unreachable", f"the answer of the gallery at {self.url} broke off ({type(exc).__name__})") from None
        finally:
            response.close()
        try:
            return json.loads(body)
        except ValueError:
            raise DreamerError("protocol_error", f"the gallery at {self.url} answered something that is not JSON") from None

    # -- the API ---------------------------------------------------------------------

    def health(self) -> Any:
        return self._json("GET", "/healthz")

    def register(self, name: str, public_key: str, invite: str | None = None) -> Any:
        headers = {"X-Dreamer-Invite": invite} if invite else None
        return self._json("POST", "/v1/publishers", json={"name": name, "public_key": public_key}, headers=headers)

    def publisher(self, name: str) -> Any:
        return self._json("GET", f"/v1/publishers/{_seg(name)}")

    def search(self, query: str, limit: int = 20) -> Any:
        return self._json("GET", "/v1/packages", params={"q": query, "limit": limit})

    def package(self, name: str) -> Any:
        return self._json("GET", f"/v1/packages/{_seg(name)}")

    def version(self, name: str, version: str) -> Any:
        return self._json("GET", f"/v1/packages/{_seg(name)}/{_seg(version)}")

    def yank(self, name: str, version: str, reason: str = "", undo: bool = False) -> Any:
        return self._json("POST", f"/v1/packages/{_seg(name)}/{_seg(version)}/yank", json={"reason": reason, "undo": undo})

    def publish(self, upload: Upload, data: bytes, progress: Progress | None = None) -> Any:
        def body() -> Iterator[bytes]:
            for start in range(0, len(data), CHUNK):
                chunk = data[start:start + CHUNK]
                yield chunk
                if progress:
                    progress(start + len(chunk), len(data))

        headers = {
            "Content-Type": "application/gzip", "Content-Length": str(len(data)),
            "X-Dreamer-Sha256": upload.sha256, "X-Dreamer-Signature": upload.signature,
            "X-Dreamer-Scopes": json.dumps(upload.scopes),
        }
        path = f"/v1/packages/{_seg(upload.name)}/{_seg(upload.version)}"
        return self._json("PUT", path, content=body(), headers=headers)

    def download(self, name: str, version: str, max_bytes: int, progress: Progress | None = None) -> bytes:
        """The archive's bytes, refusing (before reading on) anything over max_bytes."""
        request = self._http.build_request("GET", f"/v1/packages/{_seg(name)}/{_seg(version)}/archive")
        response = self._send(request, stream=True)
        try:
            total = int(response.headers.get("content-length") or 0)
            if total > max_bytes:
                raise DreamerError("payload_too_large", f"{name} {version} is {total} bytes, over the limit of {max_bytes} bytes")
            chunks, size = [], 0
            for chunk in response.iter_bytes(CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise DreamerError("payload_too_large", f"{name} {version} is over the limit of {max_bytes} bytes")
                chunks.append(chunk)
                if progress:
                    progress(size, total or size)
            return b"".join(chunks)
        except httpx.HTTPError as exc:
            raise DreamerError("gallery_unreachable", f"the download of {name} {version} from {self.url} broke off ({type(exc).__name__})") from None
        finally:
            response.close()


def _error(response: httpx.Response, url: str) -> DreamerError:
    try:
        err = response.json().get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return DreamerError(str(err.get("code") or "internal"), err["message"])
    except (ValueError, AttributeError):
        pass
    return DreamerError("protocol_error", f"the gallery at {url} answered HTTP {response.status_code}")
