"""Model providers. Each yields parity-stream `StreamChunk` dicts (§8.1), the one chunk format.

`base.py` holds the shared types and the `Router`; `parity_stream.py` and `openai_chat.py`
are the two providers. Import the submodules: nothing is re-exported here.
"""
