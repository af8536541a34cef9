"""What agent authors import: `from dreamer.sdk import Context, function`.

`REGISTRY` holds every function `@function` recorded in this process; the
worker (dreamer.sdk.worker) serves them to the kernel.
"""

from dreamer.sdk.context import Context, User
from dreamer.sdk.decorators import function
from dreamer.sdk.errors import (
    CallError,
    DefinitionError,
    DreamerSDKError,
    InvalidArgument,
    NotAvailable,
    ResultInvalid,
)
from dreamer.sdk.fetch import Response
from dreamer.sdk.questions import ask_user
from dreamer.sdk.registry import REGISTRY

__all__ = [
    "REGISTRY",
    "CallError",
    "Context",
    "DefinitionError",
    "DreamerSDKError",
    "InvalidArgument",
    "NotAvailable",
    "ResultInvalid",
    "Response",
    "User",
    "ask_user",
    "function",
]
