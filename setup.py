"""What pyproject.toml cannot say: every package under desktop/ is found, and the top-level
resources/ folder (prompts, icons) is installed as the package docatlas.resources."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages("desktop"), "docatlas.resources"],
    package_dir={"": "desktop", "docatlas.resources": "resources"},
)
