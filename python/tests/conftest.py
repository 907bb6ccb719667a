"""pytest setup: import the module built by CMake, and find the CLI binary.

RAILSIM_BUILD names the build directory (default: build/release under the
repository); the module is RAILSIM_BUILD/python/railsim*.so and the CLI
RAILSIM_BUILD/railsim.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("RAILSIM_BUILD", os.path.join(ROOT, "build", "release"))
sys.path.insert(0, os.path.join(BUILD, "python"))
