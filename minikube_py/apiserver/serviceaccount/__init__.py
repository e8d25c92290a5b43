"""Service-account tokens: signing keys, TokenRequest, the JWT authenticator, OIDC discovery.

Kubernetes pieces: pkg/serviceaccount (jwt.go's signer and authenticator, claims.go's private
claims and their validation), pkg/registry/core/serviceaccount/storage/token.go (the
`serviceaccounts/{name}/token` subresource) and pkg/serviceaccount/openidmetadata.go (the
`/.well-known/openid-configuration` and `/openid/v1/jwks` documents).
"""
