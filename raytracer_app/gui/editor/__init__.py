"""The Variant Editor: the editor itself (editor), its text widget (code_editor), its worker (worker) and
where its files live (files)."""
