"""The agent core: the loop, messages, events, ports and errors.

Imports only the standard library and pydantic; never pygls, lsprotocol or httpx (a test enforces it).
"""
