"""Zero copy: what the proxy forwards unchanged reaches the other side byte for byte, however
unusual its JSON (key order, whitespace, big integers, escapes): the params a client sent reach
the server's handler as sent, and the server's result reaches the client as the server wrote it."""

from __future__ import annotations

import msgspec
import pytest

from mcpbind import types
from mcpbind.proxy import Upstream
from mcpbind.proxy.specs import raw_request
from mcpbind.runtime.context import RequestContext
from mcpbind.server.server import Server
from mcpbind.versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from tests.proxy.proxying import FRONTS, Front, front_client, in_memory, running_proxy, stateless_params

pytestmark = pytest.mark.anyio

TOOLS_CALL = raw_request("tools/call")

# Valid JSON no encoder would write so: keys out of order, spaces, an integer beyond 64 bits,
# numbers in odd spellings, escaped and unescaped non-ASCII text.
PARAMS = (
    b'{ "name" : "echo" ,"arguments":{"z":1,"a":[1.50, 1E2,-0],'
    b'"big":123456789012345678901234567890,"s":"caf\\u00e9 \\ud83d\\ude00 \xc3\xa9 \\"q\\"\\/",'
    b'"nested":{"b":null,"a":true}} , "_meta":{"x-trace":"t1"}}'
)
RESULT = (
    b'{"structuredContent":{"z":1,"big":123456789012345678901234567890,"a":2.50},'
    b' "content":[{"type":"text","text":"caf\\u00e9 \xc3\xa9"}] ,"isError":false}'
)


def raw_server(versions: tuple[str, ...], received: list[bytes]) -> Server:
    """A server whose ``tools/call`` handler gets its params undecoded (kept in ``received``)
    and answers with :data:`RESULT` as it is."""
    server = Server(
        "raw",
        "1",
        versions=versions,
        capabilities=types.ServerCapabilities(tools=types.ServerCapabilitiesTools()),
        raw_params={"tools/call"},
    )

    async def call(params: msgspec.Raw, ctx: RequestContext) -> msgspec.Raw:
        received.append(bytes(params))
        return msgspec.Raw(RESULT)

    register = server.on(TOOLS_CALL)
    register(call)
    return server


@pytest.mark.parametrize("front", FRONTS)
async def test_params_and_result_cross_byte_for_byte(front: Front) -> None:
    received: list[bytes] = []
    upstream = Upstream(in_memory(raw_server(tuple(HANDSHAKE_VERSIONS), received)))
    async with running_proxy(upstream, front) as proxy, proxy.connect(front_client("2025")) as remote:
        result = await remote.session.request(TOOLS_CALL, msgspec.Raw(PARAMS))
    assert received == [PARAMS]
    assert bytes(result) == RESULT


async def test_a_stateless_request_s_params_cross_byte_for_byte() -> None:
    """2026 client, 2026 server: the params, envelope and all, reach the server as sent."""
    received: list[bytes] = []
    upstream = Upstream(in_memory(raw_server(tuple(sorted(MODERN_VERSIONS)), received)))
    client = front_client("2026")
    sent = msgspec.json.encode(stateless_params(client, msgspec.json.decode(PARAMS)))
    sent = sent[:-1] + b',"zz": 123456789012345678901234567890 }'  # (and some odd JSON)
    async with running_proxy(upstream) as proxy, proxy.connect(client) as remote:
        result = await remote.session.request(TOOLS_CALL, msgspec.Raw(sent))
    assert received == [sent]
    assert msgspec.json.decode(result)["structuredContent"]["big"] == 123456789012345678901234567890
