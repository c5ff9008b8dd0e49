"""Test support: fakes that implement the ports, and a fake model server over real HTTP."""
