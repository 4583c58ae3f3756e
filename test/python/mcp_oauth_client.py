"""The Python MCP SDK's OAuth client against Backyard, driven by test/mcp-oauth-python.test.ts.

Reads its settings as JSON from argv[1]: {"mcp", "redirect", "client_metadata_url" (or null for
Dynamic Client Registration), "client_name", "app_name"}. Speaks JSON lines with the test: prints
events on stdout; when the SDK sends the person to the authorization page it prints
{"event": "authorize", "url": ...} and reads one line back, either {"callback": <the redirect URL
the browser came back to>} or {"abort": true}. Steps: connect (discovery, registration, the
authorization code flow with PKCE), call createBackendApp, let the access token expire and call
again (the SDK refreshes), then wait for {"next": true} (the test has revoked the grant) and call once
more, which must not succeed without a new sign-in.
"""

import asyncio
import json
import sys
import time
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


class MemoryStorage:
    """Tokens and the client registration kept in memory, as a desktop client would keep them on disk."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def say(event: str, **fields: object) -> None:
    print(json.dumps({"event": event, **fields}), flush=True)


async def read_message() -> dict:
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if not line:
        raise RuntimeError("the test closed stdin")
    return json.loads(line)


def text_of(result) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def main() -> None:
    settings = json.loads(sys.argv[1])
    storage = MemoryStorage()

    async def redirect_handler(url: str) -> None:
        say("authorize", url=url)

    async def callback_handler() -> AuthorizationCodeResult:
        message = await read_message()
        if message.get("abort"):
            raise RuntimeError("the person did not sign in again")
        query = {k: v[0] for k, v in parse_qs(urlparse(message["callback"]).query).items()}
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    provider = OAuthClientProvider(
        server_url=settings["mcp"],
        client_metadata=OAuthClientMetadata(
            client_name=settings["client_name"],
            redirect_uris=[settings["redirect"]],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=settings.get("client_metadata_url"),
    )

    async with httpx2.AsyncClient(auth=provider, timeout=60) as http:
        async with Client(streamable_http_client(settings["mcp"], http_client=http)) as client:
            tools = await client.list_tools()
            say(
                "connected",
                tools=[tool.name for tool in tools.tools],
                client_id=storage.client.client_id if storage.client else None,
                scope=storage.tokens.scope if storage.tokens else None,
                access=storage.tokens.access_token if storage.tokens else None,
                refresh=storage.tokens.refresh_token if storage.tokens else None,
            )
            created = await client.call_tool("createBackendApp", {"appName": settings["app_name"]})
            say("called", is_error=bool(created.is_error), structured=created.structured_content, text=text_of(created))

            # The access token has expired as far as the SDK knows: its next request refreshes first.
            provider.context.token_expiry_time = time.time() - 1
            listed = await client.call_tool("getBackendApps", {})
            say(
                "refreshed",
                access=storage.tokens.access_token if storage.tokens else None,
                refresh=storage.tokens.refresh_token if storage.tokens else None,
                is_error=bool(listed.is_error),
                text=text_of(listed),
            )

            await read_message()
            try:
                again = await client.call_tool("getBackendApps", {})
                say("after-revocation", is_error=bool(again.is_error), text=text_of(again))
            except BaseException as error:  # the SDK wraps what failed in an exception group
                say("refused", error=repr(error)[:500])


asyncio.run(main())
