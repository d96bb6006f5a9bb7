"""The built-in local engine: llama.cpp's `llama-server` run by the app, and its models.

  catalog.py   the models offered for download (Hub repository, file, size, SHA-256, licence)
  models.py    what is installed under `models/` (HF cache layout + an index): add, resolve, remove
  download.py  downloads from the Hugging Face Hub (HF_ENDPOINT, HF_TOKEN) that resume with Range

May import providers/, settings/, paths.py, jsonio.py and errors.py; nothing imports Tk.
"""
