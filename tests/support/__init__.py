"""Test support: real servers and fixtures shared by tests."""
