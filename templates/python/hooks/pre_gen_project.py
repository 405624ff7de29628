"""Refuse invalid answers before cookiecutter writes any file: click-build's own
checks (click_build.new.pre_gen_hook), the ones `click-build new` runs."""
import sys

try:
    from click_build.new import pre_gen_hook
except ImportError:
    sys.exit("error: this template needs click-build beside cookiecutter: "
             "pip install 'click-build[templates]'")
sys.exit(pre_gen_hook({{ cookiecutter | tojson | tojson }}))
