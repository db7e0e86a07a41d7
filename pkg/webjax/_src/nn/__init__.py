"""jax.nn: activations and the softmax family (functions), dot_product_attention (attention),
initializers."""
