"""The API's data: object metadata, errors, selectors, patches, validation, codecs — pure
functions the storage, registry and API server layers share (upstream k8s.io/apimachinery and
pkg/apis).
"""
