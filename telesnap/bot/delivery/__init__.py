"""Showing what the changes wrote: the presenter, the chat lanes, boards, notices, tidying."""
