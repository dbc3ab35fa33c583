"""Files: the one input reader (reader.py: every file the app reads, bounded and checked), the one output
writer (writer.py: every file it writes, atomically, refusing what it must not replace), and where the
caches live (cache.py)."""
