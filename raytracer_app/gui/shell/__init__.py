"""The shell: the main window (main_window), its menus, workspaces and layout per screen (menus, workspaces,
layout), the status line (status_line), the timing log (timing_log), per-backend settings
(backend_settings), and what happens before and after the window (display, restart)."""
