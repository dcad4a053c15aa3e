//! A Vulkan layer that prints, for every compute pipeline a program creates, the driver's statistics of its
//! executable (VK_KHR_pipeline_executable_properties): registers per invocation, shared memory, and whatever else
//! the driver reports. wgpu does not expose them, so the layer sits between wgpu and the driver: it enables the
//! extension on the device (where the driver has it) and asks each compute pipeline to capture its statistics.
//! A development tool for `docs/bench/registers.sh`, not part of splatsort: one instance and one device at a time.
//!
//! Written by hand because no crate does this: the loader's layer interface (`vk_layer.h`) is a few C structs,
//! declared below; `ash` has the rest of the types.
#![allow(clippy::missing_safety_doc)]
use ash::vk;
use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Mutex;

// The loader's chain of layers, as `vk_layer.h` declares it: each layer takes its successor's entry points from the
// link and moves the chain on before calling down.
#[repr(C)]
struct LayerInstanceLink {
    next: *mut LayerInstanceLink,
    next_gipa: vk::PFN_vkGetInstanceProcAddr,
    next_gpdpa: *const c_void,
}
#[repr(C)]
struct LayerInstanceCreateInfo {
    s_type: vk::StructureType,
    p_next: *const c_void,
    function: u32,
    layer_info: *mut LayerInstanceLink,
}
#[repr(C)]
struct LayerDeviceLink {
    next: *mut LayerDeviceLink,
    next_gipa: vk::PFN_vkGetInstanceProcAddr,
    next_gdpa: vk::PFN_vkGetDeviceProcAddr,
}
#[repr(C)]
struct LayerDeviceCreateInfo {
    s_type: vk::StructureType,
    p_next: *const c_void,
    function: u32,
    layer_info: *mut LayerDeviceLink,
}
const LAYER_LINK_INFO: u32 = 0;

// What the loader's create-info structs of both kinds begin with.
#[repr(C)]
struct ChainHeader {
    s_type: vk::StructureType,
    p_next: *const c_void,
    function: u32,
}

/// The loader's link info (of type `wanted`) in a create info's chain, or null.
unsafe fn find_link(mut at: *const c_void, wanted: vk::StructureType) -> *mut c_void {
    while !at.is_null() {
        let header = at as *const ChainHeader;
        if (*header).s_type == wanted && (*header).function == LAYER_LINK_INFO {
            return at as *mut c_void;
        }
        at = (*header).p_next;
    }
    std::ptr::null_mut()
}

#[derive(Default)]
struct State {
    gipa: Option<vk::PFN_vkGetInstanceProcAddr>,
    instance: vk::Instance,
    gdpa: Option<vk::PFN_vkGetDeviceProcAddr>,
    create_compute: Option<vk::PFN_vkCreateComputePipelines>,
    create_module: Option<vk::PFN_vkCreateShaderModule>,
    exec_props: Option<vk::PFN_vkGetPipelineExecutablePropertiesKHR>,
    exec_stats: Option<vk::PFN_vkGetPipelineExecutableStatisticsKHR>,
    exec_irs: Option<vk::PFN_vkGetPipelineExecutableInternalRepresentationsKHR>,
    modules: HashMap<u64, usize>,
    count: u32,
}
static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard = STATE.lock().unwrap();
    f(guard.get_or_insert_with(State::default))
}

/// The next layer's device entry point `name` as the function type `F` (a `PFN_vk*`), where it has one.
unsafe fn device_fn<F: Copy>(gdpa: vk::PFN_vkGetDeviceProcAddr, device: vk::Device, name: &CStr) -> Option<F> {
    let f = gdpa(device, name.as_ptr())?;
    Some(std::mem::transmute_copy::<unsafe extern "system" fn(), F>(&f))
}

unsafe fn name(p: &CStr) -> &str {
    p.to_str().unwrap_or("")
}

unsafe extern "system" fn create_instance(
    info: *const vk::InstanceCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Instance,
) -> vk::Result {
    let chain =
        find_link((*info).p_next, vk::StructureType::LOADER_INSTANCE_CREATE_INFO) as *mut LayerInstanceCreateInfo;
    if chain.is_null() {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    let gipa = (*(*chain).layer_info).next_gipa;
    (*chain).layer_info = (*(*chain).layer_info).next;
    let create: vk::PFN_vkCreateInstance =
        std::mem::transmute(gipa(vk::Instance::null(), c"vkCreateInstance".as_ptr()));
    let result = create(info, alloc, out);
    if result == vk::Result::SUCCESS {
        with(|s| {
            s.gipa = Some(gipa);
            s.instance = *out;
        });
    }
    result
}

unsafe extern "system" fn create_device(
    physical: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Device,
) -> vk::Result {
    let chain = find_link((*info).p_next, vk::StructureType::LOADER_DEVICE_CREATE_INFO) as *mut LayerDeviceCreateInfo;
    if chain.is_null() {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    let gipa = (*(*chain).layer_info).next_gipa;
    let gdpa = (*(*chain).layer_info).next_gdpa;
    (*chain).layer_info = (*(*chain).layer_info).next;
    let instance = with(|s| s.instance);
    let create: vk::PFN_vkCreateDevice = std::mem::transmute(gipa(instance, c"vkCreateDevice".as_ptr()));
    // The extension, where the device has it, and its feature.
    let enumerate: vk::PFN_vkEnumerateDeviceExtensionProperties =
        std::mem::transmute(gipa(instance, c"vkEnumerateDeviceExtensionProperties".as_ptr()));
    let mut n = 0u32;
    let _ = enumerate(physical, std::ptr::null(), &mut n, std::ptr::null_mut());
    let mut props = vec![vk::ExtensionProperties::default(); n as usize];
    let _ = enumerate(physical, std::ptr::null(), &mut n, props.as_mut_ptr());
    let ext = c"VK_KHR_pipeline_executable_properties";
    let has = props.iter().any(|p| CStr::from_ptr(p.extension_name.as_ptr()) == ext);
    eprintln!("vkstats: device has {}: {has}", ext.to_str().unwrap());
    let mut modified = *info;
    let mut names: Vec<*const c_char> =
        (0..(*info).enabled_extension_count as usize).map(|i| *(*info).pp_enabled_extension_names.add(i)).collect();
    let already = names.iter().any(|&p| CStr::from_ptr(p) == ext);
    let mut feature = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR {
        pipeline_executable_info: vk::TRUE,
        ..Default::default()
    };
    if has {
        if !already {
            names.push(ext.as_ptr());
        }
        modified.enabled_extension_count = names.len() as u32;
        modified.pp_enabled_extension_names = names.as_ptr();
        feature.p_next = (*info).p_next as *mut c_void;
        modified.p_next = &feature as *const _ as *const c_void;
    }
    let result = create(physical, &modified, alloc, out);
    if result == vk::Result::SUCCESS {
        let device = *out;
        with(|s| {
            s.gdpa = Some(gdpa);
            s.create_compute = device_fn(gdpa, device, c"vkCreateComputePipelines");
            s.create_module = device_fn(gdpa, device, c"vkCreateShaderModule");
            if has {
                s.exec_props = device_fn(gdpa, device, c"vkGetPipelineExecutablePropertiesKHR");
                s.exec_stats = device_fn(gdpa, device, c"vkGetPipelineExecutableStatisticsKHR");
                s.exec_irs = device_fn(gdpa, device, c"vkGetPipelineExecutableInternalRepresentationsKHR");
            }
        });
    }
    result
}

unsafe extern "system" fn create_shader_module(
    device: vk::Device,
    info: *const vk::ShaderModuleCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::ShaderModule,
) -> vk::Result {
    let next = with(|s| s.create_module.unwrap());
    let result = next(device, info, alloc, out);
    if result == vk::Result::SUCCESS {
        use ash::vk::Handle;
        with(|s| s.modules.insert((*out).as_raw(), (*info).code_size));
    }
    result
}

unsafe extern "system" fn create_compute_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    count: u32,
    infos: *const vk::ComputePipelineCreateInfo,
    alloc: *const vk::AllocationCallbacks,
    out: *mut vk::Pipeline,
) -> vk::Result {
    let (next, props_fn, stats_fn, irs_fn) =
        with(|s| (s.create_compute.unwrap(), s.exec_props, s.exec_stats, s.exec_irs));
    // With VKSTATS_IR set to a folder, the driver's internal representations (its compiled code, where it gives
    // them) are written there too, a file each.
    let ir_dir = std::env::var_os("VKSTATS_IR").map(std::path::PathBuf::from);
    let mut copies: Vec<vk::ComputePipelineCreateInfo> = (0..count as usize).map(|i| *infos.add(i)).collect();
    if stats_fn.is_some() {
        for c in &mut copies {
            c.flags |= vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR;
            if ir_dir.is_some() {
                c.flags |= vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR;
            }
        }
    }
    let result = next(device, cache, count, copies.as_ptr(), alloc, out);
    if result != vk::Result::SUCCESS {
        return result;
    }
    let (Some(props_fn), Some(stats_fn)) = (props_fn, stats_fn) else { return result };
    for (i, c) in copies.iter().enumerate() {
        use ash::vk::Handle;
        let pipeline = *out.add(i);
        let entry = name(CStr::from_ptr(c.stage.p_name));
        let (index, size) = with(|s| {
            s.count += 1;
            (s.count, s.modules.get(&c.stage.module.as_raw()).copied().unwrap_or(0))
        });
        let info = vk::PipelineInfoKHR { pipeline, ..Default::default() };
        let mut n = 0u32;
        let _ = props_fn(device, &info, &mut n, std::ptr::null_mut());
        let mut props = vec![vk::PipelineExecutablePropertiesKHR::default(); n as usize];
        let _ = props_fn(device, &info, &mut n, props.as_mut_ptr());
        for (e, p) in props.iter().enumerate() {
            let exe = vk::PipelineExecutableInfoKHR { pipeline, executable_index: e as u32, ..Default::default() };
            let mut m = 0u32;
            let _ = stats_fn(device, &exe, &mut m, std::ptr::null_mut());
            let mut stats = vec![vk::PipelineExecutableStatisticKHR::default(); m as usize];
            let _ = stats_fn(device, &exe, &mut m, stats.as_mut_ptr());
            let mut line = format!(
                "vkstats: #{index} entry {entry} (module {size} B) exe {e} '{}' subgroup {}:",
                name(CStr::from_ptr(p.name.as_ptr())),
                p.subgroup_size
            );
            for st in &stats {
                let v = match st.format {
                    vk::PipelineExecutableStatisticFormatKHR::BOOL32 => format!("{}", st.value.b32),
                    vk::PipelineExecutableStatisticFormatKHR::INT64 => format!("{}", st.value.i64),
                    vk::PipelineExecutableStatisticFormatKHR::UINT64 => format!("{}", st.value.u64),
                    _ => format!("{:.3}", st.value.f64),
                };
                line += &format!(" [{}={v}]", name(CStr::from_ptr(st.name.as_ptr())));
            }
            eprintln!("{line}");
            if let (Some(dir), Some(irs_fn)) = (&ir_dir, irs_fn) {
                write_irs(dir, irs_fn, device, &exe, &format!("{index:03}-{entry}-{e}"));
            }
        }
    }
    result
}

/// Writes each internal representation of executable `exe` to `dir`/`stem`-NAME.txt (or .bin where not text).
unsafe fn write_irs(
    dir: &std::path::Path,
    irs_fn: vk::PFN_vkGetPipelineExecutableInternalRepresentationsKHR,
    device: vk::Device,
    exe: &vk::PipelineExecutableInfoKHR,
    stem: &str,
) {
    let mut n = 0u32;
    let _ = irs_fn(device, exe, &mut n, std::ptr::null_mut());
    let mut irs = vec![vk::PipelineExecutableInternalRepresentationKHR::default(); n as usize];
    // First the sizes (no data pointers), then the data.
    let _ = irs_fn(device, exe, &mut n, irs.as_mut_ptr());
    let mut data: Vec<Vec<u8>> = irs.iter().map(|ir| vec![0u8; ir.data_size]).collect();
    for (ir, bytes) in irs.iter_mut().zip(&mut data) {
        ir.p_data = bytes.as_mut_ptr() as *mut c_void;
    }
    let _ = irs_fn(device, exe, &mut n, irs.as_mut_ptr());
    for (ir, bytes) in irs.iter().zip(&data) {
        let ir_name: String = name(CStr::from_ptr(ir.name.as_ptr()))
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let text = ir.is_text == vk::TRUE;
        let end = if text { bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len()) } else { bytes.len() };
        let path = dir.join(format!("{stem}-{ir_name}.{}", if text { "txt" } else { "bin" }));
        if let Err(err) = std::fs::write(&path, &bytes[..end]) {
            eprintln!("vkstats: cannot write {}: {err}", path.display());
        }
    }
}

unsafe fn hook(n: &CStr) -> Option<vk::PFN_vkVoidFunction> {
    let f: *const c_void = match n.to_bytes() {
        b"vkGetInstanceProcAddr" => vkGetInstanceProcAddr as *const c_void,
        b"vkGetDeviceProcAddr" => vkGetDeviceProcAddr as *const c_void,
        b"vkCreateInstance" => create_instance as *const c_void,
        b"vkCreateDevice" => create_device as *const c_void,
        b"vkCreateComputePipelines" => create_compute_pipelines as *const c_void,
        b"vkCreateShaderModule" => create_shader_module as *const c_void,
        _ => return None,
    };
    Some(std::mem::transmute::<*const c_void, vk::PFN_vkVoidFunction>(f))
}

#[no_mangle]
pub unsafe extern "system" fn vkGetInstanceProcAddr(
    instance: vk::Instance,
    p: *const c_char,
) -> vk::PFN_vkVoidFunction {
    if let Some(f) = hook(CStr::from_ptr(p)) {
        return f;
    }
    match with(|s| s.gipa) {
        Some(gipa) => gipa(instance, p),
        None => None,
    }
}

#[no_mangle]
pub unsafe extern "system" fn vkGetDeviceProcAddr(device: vk::Device, p: *const c_char) -> vk::PFN_vkVoidFunction {
    let n = CStr::from_ptr(p);
    if matches!(n.to_bytes(), b"vkGetDeviceProcAddr" | b"vkCreateComputePipelines" | b"vkCreateShaderModule") {
        return hook(n).unwrap();
    }
    match with(|s| s.gdpa) {
        Some(gdpa) => gdpa(device, p),
        None => None,
    }
}
