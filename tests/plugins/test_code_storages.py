"""The storage sources tests/ui imports under this module's old name; they live in
tests/plugins/code_plugins.py (the tests of plugin thread storages are in
tests/plugins/code/test_storages.py). Delete this file when tests/ui imports them from there."""

from .code_plugins import FOLDER_STORAGE, LISTING_STORAGE

__all__ = ["FOLDER_STORAGE", "LISTING_STORAGE"]
