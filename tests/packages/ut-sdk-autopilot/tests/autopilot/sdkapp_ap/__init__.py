"""Autopilot tests of sdkapp (they run on a device, never in the package)."""
