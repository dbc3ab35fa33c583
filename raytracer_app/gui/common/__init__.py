"""What several tools share: charts (charts, chart_export), dialogs (TextDialog, ask_path), small widgets
(slider_spin, wheel_guard), saving off the GUI thread (saving), the settings store and its one typed reader
(settings, file_dialogs), the simulator's limits (sim_limits) and the worker machinery (workers). Imports no
other room of the GUI."""
