"""GLSL ES 3.00 codegen: kernels as fragment shaders over RGBA32UI textures (webgl)."""
