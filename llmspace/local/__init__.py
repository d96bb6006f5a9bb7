"""The built-in local engine: llama.cpp's `llama-server` run by the app, and its models.

  catalog.py   the models offered for download (Hub repository, file, size, SHA-256, licence)
  models.py    what is installed under `models/` (HF cache layout + an index): add, resolve, remove
  download.py  downloads from the Hugging Face Hub (HF_ENDPOINT, HF_TOKEN) that resume with Range
  provider.py  the provider `local` ("Built-in (llama.cpp)"): its API, its models, its adapter
  engine.py    start, share, stop and inspect the engine (`engine_status`, `stop_engine`)
  supervisor.py  the watchdog process that runs llama-server and stops it when idle
  engine_files.py  the shared files under `run/` (record, locks, last use, last crash)
  engine_settings.py  settings/local-engine.json: contextSize, threads, idleMinutes
  gguf_meta.py  reads a GGUF header (chat template, architecture) without loading tensors
  build_status.py  a checkout's engine build in the background (`make run`): its status file
  templates/   chat templates for GGUF files that have none (Gemma base models)

May import providers/, settings/, paths.py, jsonio.py and errors.py; nothing imports Tk.
"""
