"""The Lessons tool: the lesson's steps, guesses, runs and explanations (panel), and the shipped reference
results it shows without a GPU (references)."""
