"""DocAtlas's bundled files: prompt profiles (`prompts/`) and icons (`icons/`).

This folder sits at the top of the repository; an installed DocAtlas has it as the package
`docatlas.resources` (pyproject.toml maps it there). Code finds it with
`docatlas.core.base.resources.resource_dir`, never by its own path.
"""
