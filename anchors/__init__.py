"""The shipped anchor sets, installed as package data `annotator.anchors` (read via annotator.resources)."""
