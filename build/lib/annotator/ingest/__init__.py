"""Importers (manifest, folder, harness, ratings, judge scores, pair votes,
anchors) and the content-addressed media store. Each importer validates the
whole file before anything is written: an import lands whole or not at all."""
