"""Training-data builder for the vistawise detector (see tools/detector/README.md)."""
