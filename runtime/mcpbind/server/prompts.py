"""Prompts backed by functions.

    @server.prompt()
    def review(code: str, language: str = "python") -> str:
        '''Review a piece of code.'''
        return f"Please review this {language} code: {code}"

Parameters are the prompt's arguments (required when they have no default; a parameter
annotated with ``RequestContext`` receives the context). Arguments arrive as strings and are
converted to the annotated types (``"3"`` for an ``int`` is fine), as template variables are
(see :mod:`mcpbind.server.callables`); a value that does not convert is a -32602 error naming it. A ``str`` becomes one
user message; a content block, an :class:`~mcpbind.server.media.Image` / :class:`~mcpbind.server.media.Audio`,
a ``PromptMessage``, or a list mixing them becomes messages (plain strings, blocks and media as
user messages); a ``GetPromptResult`` is sent as it is. :func:`user_message` and
:func:`assistant_message` build a message with either role from any of those::

    @server.prompt()
    def describe(ctx: RequestContext) -> list[types.PromptMessage]:
        return [user_message(Image(path="photo.jpg")), assistant_message("I see a photo of ...")]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcpbind import types
from mcpbind.runtime.context import RequestContext
from mcpbind.server.callables import UserFunction
from mcpbind.server.media import Media

__all__ = ["FunctionPrompt", "MessageContent", "assistant_message", "user_message"]

_BLOCKS = (
    types.TextContent,
    types.ImageContent,
    types.AudioContent,
    types.ResourceLink,
    types.EmbeddedResource,
)


@dataclass
class FunctionPrompt:
    fn: Callable[..., Any]
    name: str
    title: str | None = None
    description: str | None = None
    meta: dict[str, Any] | None = None
    icons: list[types.Icon] | None = None
    _function: UserFunction = field(init=False)

    def __post_init__(self) -> None:
        # Prompt arguments travel as strings: unannotated parameters are strings.
        self._function = UserFunction.inspect(self.fn, f"{self.name}Arguments", default_type=str)
        if self.description is None:
            self.description = self._function.description

    def definition(self) -> types.Prompt:
        descriptions = self._function.descriptions
        return types.Prompt(
            name=self.name,
            title=self.title if self.title is not None else types.UNSET,
            description=self.description if self.description is not None else types.UNSET,
            arguments=[
                types.PromptArgument(
                    name=name,
                    description=descriptions.get(name, types.UNSET),
                    required=name in self._function.required,
                )
                for name in self._function.parameter_names
            ],
            icons=self.icons if self.icons is not None else types.UNSET,
            meta=self.meta if self.meta is not None else types.UNSET,
        )

    async def get(self, arguments: dict[str, str], ctx: RequestContext) -> types.GetPromptResult:
        kwargs = self._function.bind(arguments, f"prompt {self.name}", from_strings=True)
        value = await self._function.call(kwargs, ctx)
        if isinstance(value, types.GetPromptResult):
            return value
        items = value if isinstance(value, list | tuple) else [value]
        return types.GetPromptResult(
            messages=[_message(item) for item in items],
            description=self.description if self.description is not None else types.UNSET,
        )


MessageContent = str | types.ContentBlock | Media
"""What a prompt message can be made of: text, a content block, an image or audio."""


def user_message(content: MessageContent) -> types.PromptMessage:
    """A prompt message from the user."""
    return types.PromptMessage(role="user", content=_block(content))


def assistant_message(content: MessageContent) -> types.PromptMessage:
    """A prompt message from the assistant (to prefill its side of the conversation)."""
    return types.PromptMessage(role="assistant", content=_block(content))


def _block(content: object) -> types.ContentBlock:
    if isinstance(content, str):
        return types.TextContent(text=content)
    if isinstance(content, Media):
        return content.to_content()
    if isinstance(content, _BLOCKS):
        return content
    raise TypeError(
        f"a prompt message holds text, a content block, an Image or Audio, not {type(content).__name__}"
    )


def _message(item: object) -> types.PromptMessage:
    if isinstance(item, types.PromptMessage):
        return item
    try:
        return types.PromptMessage(role="user", content=_block(item))
    except TypeError:
        raise TypeError(
            f"a prompt returns text, content blocks, Image/Audio or PromptMessages, not {type(item).__name__}"
        ) from None
