"""What runs on a test box: the runner, the doctor's checks and the machine record.

Standard library only (tests/test_architecture.py checks it): :mod:`abstat.lab.bundle` ships this
package to a bare box as a zip, where Python 3.8 or newer is all there is.
"""
