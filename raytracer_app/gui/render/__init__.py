"""The Render tool: the render view (view), its Controls (controls, count_control), the RenderModel and which
settings hold it (models, model_settings), the render worker (worker), Compare Memory's dialog and the
Sphere Count Curve (compare_dialog, count_curve)."""
