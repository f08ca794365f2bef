"""Mutation testing of the protocol core (issue 19): `nox -s mutants`, see mutation/README.md."""
