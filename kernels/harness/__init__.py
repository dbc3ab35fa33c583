"""The benchmark harness: what an algorithm declares (descriptor: Algorithm, Option, SizeAxis; variants;
kernel declarations for the inspector), and what runs them (bench: verify, time, rows, CSV, copy peak;
frames and render problems for the two renderable algorithms)."""
