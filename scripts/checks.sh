#!/bin/sh
# Type-check and lint side by side (each is mostly one core): both run to the end, and either
# failing fails the whole.
npm run --silent typecheck &
typecheck=$!
npm run --silent lint
lint=$?
wait "$typecheck"
typed=$?
[ "$typed" -eq 0 ] && [ "$lint" -eq 0 ]
