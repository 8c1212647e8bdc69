"""Kueue's API as kueue-fast reads it: the object model, the field declarations, validation (CRD
schema and webhooks), quantities, per-pod requests, feature gates and the typed errors.
"""
