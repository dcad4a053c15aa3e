// The prepare pass: one thread turns the count a GPU pass wrote into a sort's parameters and dispatch arguments
// (`prepare_sort` in shaders/prepare.wgsl, appended to this). `count_source` is the sort buffers' 4-word count.

@group(0) @binding(0) var<uniform> prepare_settings: PrepareSettings;
@group(0) @binding(1) var<storage, read> count_source: array<u32>;
@group(0) @binding(2) var<storage, read_write> prepare_params: array<u32>;
@group(0) @binding(3) var<storage, read_write> prepare_dispatch: array<u32>;

@compute @workgroup_size(1)
fn main() {
    prepare_sort(count_source[prepare_settings.count_word]);
}
