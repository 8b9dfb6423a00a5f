<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>LaunchOptions</name>
    <message>
        <location filename="../gui/launchoptions.cpp" line="+39"/>
        <source>Evolves fast GPU kernels and verifies them against a reference.</source>
        <translation>演化快速的 GPU 内核，并对照参考实现进行验证。</translation>
    </message>
    <message>
        <location line="-15"/>
        <source>Show the tasks found under &lt;dir&gt;.</source>
        <translation>显示 &lt;目录&gt; 下找到的任务。</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+3"/>
        <source>dir</source>
        <translation>目录</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>Open the project in &lt;dir&gt;.</source>
        <translation>打开 &lt;目录&gt; 中的项目。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Save an image of the window to &lt;file&gt; and quit.</source>
        <translation>将窗口截图保存到 &lt;文件&gt; 后退出。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>file</source>
        <translation>文件</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Open the demo project in the user&apos;s data folder, creating it if missing.</source>
        <translation>打开用户数据文件夹中的演示项目；如不存在则创建。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>An existing project to open: its folder, its project.kfproj or its project.db.</source>
        <translation>要打开的现有项目：其文件夹、其 project.kfproj 或其 project.db。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>[project]</source>
        <translation>[项目]</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>No such file or folder: %1</source>
        <translation>没有这样的文件或文件夹：%1</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Not a Kernel Foundry project: %1 (give the project&apos;s folder, its %2 or its %3)</source>
        <translation>不是 Kernel Foundry 项目：%1（请给出项目的文件夹、其 %2 或其 %3）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Not a Kernel Foundry project: %1 (no %2 in %3)</source>
        <translation>不是 Kernel Foundry 项目：%1（%3 中没有 %2）</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Unexpected argument: %1</source>
        <translation>意外的参数：%1</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Give either a project to open or --project/--demo, not both.</source>
        <translation>请给出要打开的项目或 --project/--demo，不能同时给出。</translation>
    </message>
</context>
<context>
    <name>kfgui::CandidateMetrics</name>
    <message>
        <location filename="../gui/compare/candidatemetrics.cpp" line="+35"/>
        <source>Time (ms)</source>
        <translation>时间 (ms)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GB/s</source>
        <translation>GB/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GFLOP/s</source>
        <translation>GFLOP/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Speedup</source>
        <translation>加速比</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Registers</source>
        <translation>寄存器</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Occupancy (%)</source>
        <translation>占用率 (%)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Stall: %1</source>
        <translation>停顿：%1</translation>
    </message>
</context>
<context>
    <name>kfgui::CandidateView</name>
    <message>
        <location filename="../gui/candidate/candidateview.cpp" line="+25"/>
        <source>Evaluate</source>
        <translation>评估</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Revert</source>
        <translation>还原</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Inject into search…</source>
        <translation>注入到搜索…</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Compile and evaluate the edited source; the result is stored as your candidate</source>
        <translation>编译并评估编辑后的源代码；结果将保存为您的候选</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Stop the evaluation in progress; nothing is stored</source>
        <translation>停止正在进行的评估；不保存任何结果</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Add the edited source to an island of the running search</source>
        <translation>将编辑后的源代码加入正在运行的搜索中的一个岛</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Stored diagnosis</source>
        <translation>已保存的诊断</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+160"/>
        <source>Edited source</source>
        <translation>编辑后的源代码</translation>
    </message>
    <message>
        <location line="-144"/>
        <source>Diagnosis</source>
        <translation>诊断</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Provenance and rationale</source>
        <translation>来源与依据</translation>
    </message>
    <message>
        <location line="+48"/>
        <source>Candidate %1 not found</source>
        <translation>未找到候选 %1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The project has no candidate %1.</source>
        <translation>项目中没有候选 %1。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Candidate %1 — %2, run %3</source>
        <translation>候选 %1 — %2，运行 %3</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Not evaluated yet.</source>
        <translation>尚未评估。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Candidate %1</source>
        <translation>候选 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cannot read the candidate: %1</source>
        <translation>无法读取候选：%1</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Evaluating…</source>
        <translation>正在评估…</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Edited source (stored as candidate %1)</source>
        <translation>编辑后的源代码（已保存为候选 %1）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Edited source (not stored)</source>
        <translation>编辑后的源代码（未保存）</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Inject into search</source>
        <translation>注入到搜索</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Island that receives the edited source:</source>
        <translation>接收编辑后源代码的岛：</translation>
    </message>
</context>
<context>
    <name>kfgui::CodeEditor</name>
    <message>
        <location filename="../gui/editor/codeeditor.cpp" line="+99"/>
        <source> (column %1)</source>
        <translation>（第 %1 列）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
</context>
<context>
    <name>kfgui::CompareView</name>
    <message>
        <location filename="../gui/compare/compareview.cpp" line="+32"/>
        <source>Side by side</source>
        <translation>并排</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Unified</source>
        <translation>统一</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>View:</source>
        <translation>视图：</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Source diff</source>
        <translation>源代码差异</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Metrics</source>
        <translation>指标</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Roofline</source>
        <translation>Roofline 模型</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Candidate %1 is not in the project.</source>
        <translation>候选 %1 不在项目中。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Candidate %1 → candidate %2: %3 lines added, %4 removed</source>
        <translation>候选 %1 → 候选 %2：新增 %3 行，删除 %4 行</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Candidate %1</source>
        <translation>候选 %1</translation>
    </message>
    <message>
        <location line="+4"/>
        <location line="+11"/>
        <source>Cannot read the project: %1</source>
        <translation>无法读取项目：%1</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>Run %1 — %2</source>
        <translation>运行 %1 — %2</translation>
    </message>
</context>
<context>
    <name>kfgui::DiagnosisPanel</name>
    <message>
        <location filename="../gui/candidate/diagnosispanel.cpp" line="+19"/>
        <location line="+79"/>
        <location line="+1"/>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <location line="-80"/>
        <location line="+79"/>
        <location line="+1"/>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <location line="-60"/>
        <source>Field</source>
        <translation>字段</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Diagnosis</source>
        <translation>诊断</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>Summary</source>
        <translation>摘要</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>stage</source>
        <translation>阶段</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>message</source>
        <translation>消息</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>backend</source>
        <translation>后端</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>fitness</source>
        <translation>适应度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>kernel launches</source>
        <translation>内核启动次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>eval seconds</source>
        <translation>评估耗时（秒）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>advice</source>
        <translation>建议</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compile</source>
        <translation>编译</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ok</source>
        <translation>成功</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>cached</source>
        <translation>已缓存</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>seconds</source>
        <translation>耗时（秒）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>compiler</source>
        <translation>编译器</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>diagnostics</source>
        <translation>诊断信息</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1:%2:%3 %4</source>
        <translation>%1:%2:%3 %4</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>resources</source>
        <translation>资源</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Correctness</source>
        <translation>正确性</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Timing</source>
        <translation>计时</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Roofline</source>
        <translation>Roofline 模型</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Integrity</source>
        <translation>完整性</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Profile</source>
        <translation>性能剖析</translation>
    </message>
</context>
<context>
    <name>kfgui::DiffModel</name>
    <message>
        <location filename="../gui/compare/sourcediff.cpp" line="+100"/>
        <location line="+3"/>
        <source>Old</source>
        <translation>旧</translation>
    </message>
    <message>
        <location line="-3"/>
        <location line="+3"/>
        <source>New</source>
        <translation>新</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>Source</source>
        <translation>源代码</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Candidate A</source>
        <translation>候选 A</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Candidate B</source>
        <translation>候选 B</translation>
    </message>
</context>
<context>
    <name>kfgui::EngineWords</name>
    <message>
        <location filename="../gui/enginewords.cpp" line="+22"/>
        <source>correct</source>
        <translation>正确</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>compile error</source>
        <translation>编译错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>load error</source>
        <translation>加载错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>runtime error</source>
        <translation>运行时错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>timeout</source>
        <translation>超时</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>incorrect</source>
        <translation>结果错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>integrity violation</source>
        <translation>完整性违规</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>compile</source>
        <translation>编译</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>load</source>
        <translation>加载</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>correctness</source>
        <translation>正确性</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>integrity</source>
        <translation>完整性</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>timing</source>
        <translation>计时</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>profile</source>
        <translation>性能剖析</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+11"/>
        <source>done</source>
        <translation>完成</translation>
    </message>
    <message>
        <location line="+95"/>
        <source>evaluations</source>
        <translation>评估次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>tokens</source>
        <translation>令牌</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>cost</source>
        <translation>费用</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LLM calls</source>
        <translation>LLM 调用次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>wall time</source>
        <translation>墙钟时间</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>%1 (not supported)</source>
        <translation>%1（不受支持）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 (already finished)</source>
        <translation>%1（已完成）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 (the set&apos;s %2 budget is spent)</source>
        <translation>%1（问题集的 %2 预算已用完）</translation>
    </message>
    <message>
        <location filename="../gui/runs/runphase.cpp" line="+18"/>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <location filename="../gui/enginewords.cpp" line="-113"/>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <location filename="../gui/runs/runphase.cpp" line="+1"/>
        <source>pausing after the batch in flight…</source>
        <translation>当前批次完成后暂停…</translation>
    </message>
    <message>
        <location filename="../gui/enginewords.cpp" line="+1"/>
        <source>paused</source>
        <translation>已暂停</translation>
    </message>
    <message>
        <location filename="../gui/runs/runphase.cpp" line="+1"/>
        <source>stopping after the batch in flight…</source>
        <translation>当前批次完成后停止…</translation>
    </message>
    <message>
        <location filename="../gui/enginewords.cpp" line="+2"/>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>note</source>
        <translation>提示</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>stopped on request</source>
        <translation>应请求停止</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>search space exhausted: no expert can propose a new child on any island</source>
        <translation>搜索空间已穷尽：没有专家能在任何岛上提出新的子代</translation>
    </message>
    <message>
        <location line="-4"/>
        <source>evaluation budget of %1 spent</source>
        <translation>已用完 %1 次评估的预算</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>time limit of %1 s reached</source>
        <translation>已达到 %1 秒的时间上限</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no improvement in %1 rounds</source>
        <translation>%1 轮没有改进</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>LLM budget spent: %1 of %2 calls</source>
        <translation>LLM 预算已用完：%1 / %2 次调用</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LLM budget spent: %1 of %2 tokens</source>
        <translation>LLM 预算已用完：%1 / %2 个令牌</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LLM budget spent: cost %1 of %2</source>
        <translation>LLM 预算已用完：费用 %1 / %2</translation>
    </message>
</context>
<context>
    <name>kfgui::EvaluationWorker</name>
    <message>
        <location filename="../gui/candidate/evaluationworker.cpp" line="+36"/>
        <source>Evaluation failed: %1</source>
        <translation>评估失败：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Evaluation failed for an unknown reason.</source>
        <translation>评估因未知原因失败。</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Candidate %1 is not in the project.</source>
        <translation>候选 %1 不在项目中。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Run %1 is not in the project.</source>
        <translation>运行 %1 不在项目中。</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>The task &quot;%1&quot; of run %2 cannot be found.</source>
        <translation>找不到运行 %2 的任务“%1”。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Run %1 names an unknown backend.</source>
        <translation>运行 %1 指定了未知的后端。</translation>
    </message>
    <message>
        <location line="-22"/>
        <location line="+31"/>
        <source>Edited by hand from candidate %1.</source>
        <translation>基于候选 %1 手工编辑。</translation>
    </message>
</context>
<context>
    <name>kfgui::ExecutorPage</name>
    <message>
        <location filename="../gui/settings/executorpage.cpp" line="+28"/>
        <source>Also time torch.compile (eager PyTorch always is)</source>
        <translation>同时测量 torch.compile（始终测量 eager PyTorch）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>This machine</source>
        <translation>本机</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Slurm cluster (one job per worker)</source>
        <translation>Slurm 集群（每个 worker 一个作业）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the cluster&apos;s default</source>
        <translation>集群默认值</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>one on CUDA, none on the host</source>
        <translation>CUDA 上一个，主机上不用</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the partition&apos;s default (minutes, or D-HH:MM:SS)</source>
        <translation>分区默认值（分钟，或 D-HH:MM:SS）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>your default account</source>
        <translation>你的默认账户</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the project&apos;s slurm folder (must be visible to the nodes)</source>
        <translation>项目的 slurm 文件夹（计算节点必须能访问）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>$KF_PYTHON or python3</source>
        <translation>$KF_PYTHON 或 python3</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the bundled resources/kernelbench/kb_worker.py</source>
        <translation>自带的 resources/kernelbench/kb_worker.py</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Correctness trials per evaluation, each on fresh random inputs (--trials)</source>
        <translation>每次评估的正确性试验次数，每次使用新的随机输入（--trials）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Timed calls per evaluation; the median is kept (--reps)</source>
        <translation>每次评估的计时调用次数；取中位数（--reps）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>How outputs are compared with the reference&apos;s (--tolerance; docs/kernelbench.md)</source>
        <translation>输出与参考实现输出的比较方式（--tolerance；见 docs/kernelbench.md）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Where searches run their evaluation workers. With Slurm, each worker is a job submitted with sbatch that connects back to the app; a job that is cancelled or pre-empted is submitted again and no evaluation is lost.</source>
        <translation>搜索的评估 worker 在哪里运行。使用 Slurm 时，每个 worker 是一个用 sbatch 提交的作业，并连回本应用；被取消或被抢占的作业会重新提交，不会丢失任何评估。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Workers run on:</source>
        <translation>Worker 运行于：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Partition:</source>
        <translation>分区：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GPUs per job:</source>
        <translation>每个作业的 GPU：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Time limit:</source>
        <translation>时间限制：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Account:</source>
        <translation>账户：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Spool folder:</source>
        <translation>Spool 文件夹：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>KernelBench problems are evaluated by a Python worker: the Python with PyTorch and the worker script it runs.</source>
        <translation>KernelBench 问题由 Python worker 评估：装有 PyTorch 的 Python 及其运行的 worker 脚本。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Python (KernelBench):</source>
        <translation>Python（KernelBench）：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>KernelBench worker:</source>
        <translation>KernelBench worker：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Correctness trials:</source>
        <translation>正确性试验次数：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Timed calls:</source>
        <translation>计时调用次数：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tolerance policy:</source>
        <translation>容差策略：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Baselines:</source>
        <translation>基线：</translation>
    </message>
</context>
<context>
    <name>kfgui::KernelBenchReportDialog</name>
    <message>
        <location filename="../gui/runs/kernelbenchreport.cpp" line="+41"/>
        <source>KernelBench Report</source>
        <translation>KernelBench 报告</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>p</source>
        <translation>p</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>fast_p vs eager</source>
        <translation>fast_p（对比 eager）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>fast_p vs torch.compile</source>
        <translation>fast_p（对比 torch.compile）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The share of all problems whose kernel is correct and more than p times as fast as the baseline; a problem without a correct kernel counts as a failure.</source>
        <translation>内核正确且速度超过基线 p 倍的问题占全部问题的比例；没有正确内核的问题计为失败。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Problem</source>
        <translation>问题</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Kernel ms</source>
        <translation>内核 ms</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Eager ms</source>
        <translation>Eager ms</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Compile ms</source>
        <translation>Compile ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>vs eager</source>
        <translation>对比 eager</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>vs compile</source>
        <translation>对比 compile</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Evaluations</source>
        <translation>评估次数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>&amp;Refresh</source>
        <translation>刷新(&amp;R)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Copy as Markdown</source>
        <translation>复制为 Markdown(&amp;C)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Save JSON…</source>
        <translation>保存 JSON(&amp;S)…</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>The project cannot be read: %1</source>
        <translation>无法读取项目：%1</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>level %1 of %2: %3</source>
        <translation>%2 的 level %1：%3</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Not counted (the folder does not read): %1</source>
        <translation>未计入（无法读取该文件夹）：%1</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>No KernelBench problem in this project: add a problem set (File › Add KernelBench Problems…) and search its problems.</source>
        <translation>此项目中没有 KernelBench 问题：请添加问题集（文件 › 添加 KernelBench 问题…）并搜索其中的问题。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&lt;b&gt;%1 problem(s)&lt;/b&gt;: %2 attempted, %3 correct (%4). Geometric-mean speedup of the correct kernels: %5 over eager PyTorch, %6 over torch.compile. Tolerance: %7.</source>
        <translation>&lt;b&gt;%1 个问题&lt;/b&gt;：已尝试 %2 个，正确 %3 个（%4）。正确内核的几何平均加速比：相对 eager PyTorch %5，相对 torch.compile %6。容差：%7。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 correct problem(s) have no torch.compile time.</source>
        <translation>%1 个正确的问题没有 torch.compile 时间。</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>correct</source>
        <translation>正确</translation>
    </message>
    <message>
        <location line="+36"/>
        <location line="+6"/>
        <source>Save KernelBench Report</source>
        <translation>保存 KernelBench 报告</translation>
    </message>
    <message>
        <location line="-4"/>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>kfgui::KernelBenchSet</name>
    <message>
        <location filename="../gui/project/kernelbenchset.cpp" line="+23"/>
        <source>The KernelBench folder %1 does not exist.</source>
        <translation>KernelBench 文件夹 %1 不存在。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>%1 holds no KernelBench problems (files named &lt;id&gt;_&lt;Name&gt;.py).</source>
        <translation>%1 中没有 KernelBench 问题（名为 &lt;id&gt;_&lt;Name&gt;.py 的文件）。</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Level %1 has no problem %2.</source>
        <translation>级别 %1 没有问题 %2。</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 is not a KernelBench problem set file (a JSON object with &quot;sets&quot;).</source>
        <translation>%1 不是 KernelBench 问题集文件（含 &quot;sets&quot; 的 JSON 对象）。</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>kfgui::KernelBenchSetSearchDialog</name>
    <message>
        <location filename="../gui/runs/kernelbenchsetsearch.cpp" line="+20"/>
        <source>Search KernelBench Problem Set</source>
        <translation>搜索 KernelBench 问题集</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Level %1 of %2 (%3)</source>
        <translation>%2 的级别 %1（%3）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>every problem</source>
        <translation>全部问题</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Problem set:</source>
        <translation>问题集：</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>no limit</source>
        <translation>不限</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Evaluations over all the set&apos;s problems, shared out as they run: what one problem leaves goes to the next</source>
        <translation>问题集所有问题共享的评估次数，随运行逐个分配：一个问题未用完的部分留给下一个</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>Evaluations for the set:</source>
        <translation>问题集的评估次数：</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>LLM tokens (input and output) over all the set&apos;s problems</source>
        <translation>问题集所有问题共享的 LLM 令牌数（输入与输出）</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>LLM tokens for the set:</source>
        <translation>问题集的 LLM 令牌数：</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>LLM cost over all the set&apos;s problems, in the unit of the providers&apos; prices</source>
        <translation>问题集所有问题共享的 LLM 费用，单位与提供方的价格相同</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>LLM cost for the set:</source>
        <translation>问题集的 LLM 费用：</translation>
    </message>
    <message>
        <location line="+4"/>
        <source> min</source>
        <translation> 分钟</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>Wall time of the whole search over the set</source>
        <translation>整个问题集搜索的实际耗时</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Time for the set:</source>
        <translation>问题集的时间：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Skip problems already searched to the end in this project</source>
        <translation>跳过本项目中已搜索完成的问题</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Each problem also keeps the run panel&apos;s limits: at most %1 evaluations, and its time limit. The problems are searched one after the other; Stop ends the whole set.</source>
        <translation>每个问题仍受运行面板的限制：最多 %1 次评估，以及其时间限制。问题依次搜索；“停止”会结束整个问题集。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Start</source>
        <translation>开始</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>%1 problem(s), %2 of them not supported (skipped)</source>
        <translation>%1 个问题，其中 %2 个不受支持（将跳过）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 problem(s)</source>
        <translation>%1 个问题</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The set cannot be read: %1</source>
        <translation>无法读取问题集：%1</translation>
    </message>
</context>
<context>
    <name>kfgui::LibraryDetail</name>
    <message>
        <location filename="../gui/library/librarydetail.cpp" line="+35"/>
        <source>any</source>
        <translation>任意</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Select a pattern or an insight.</source>
        <translation>请选择一个模式或洞见。</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Tunable</source>
        <translation>可调参数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Values</source>
        <translation>取值</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Default</source>
        <translation>默认值</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Line</source>
        <translation>行</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>&lt;b&gt;%1&lt;/b&gt; — %2, %3 backend&lt;br&gt;</source>
        <translation>&lt;b&gt;%1&lt;/b&gt; — %2，%3 后端&lt;br&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Family: %1 · bound: %2 · provenance: %3&lt;br&gt;</source>
        <translation>系列：%1 · 瓶颈：%2 · 来源：%3&lt;br&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status: %1%2 · used %3 times, kept %4&lt;br&gt;</source>
        <translation>状态：%1%2 · 已使用 %3 次，保留 %4 次&lt;br&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> (%1)</source>
        <translation>（%1）</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>constraint</source>
        <translation>约束</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&lt;b&gt;When&lt;/b&gt; op class %1, bound %2, status %3, expert %4&lt;br&gt;</source>
        <translation>&lt;b&gt;当&lt;/b&gt; 算子类别为 %1、瓶颈为 %2、状态为 %3、专家为 %4 时&lt;br&gt;</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;Then&lt;/b&gt; %1&lt;br&gt;</source>
        <translation>&lt;b&gt;则&lt;/b&gt; %1&lt;br&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Expert: %1 · status: %2 · weight %3&lt;br&gt;</source>
        <translation>专家：%1 · 状态：%2 · 权重 %3&lt;br&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Evidence: %1 applications, %2 successes, %3 failures, median gain ×%4&lt;br&gt;</source>
        <translation>证据：应用 %1 次，成功 %2 次，失败 %3 次，增益中位数 ×%4&lt;br&gt;</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>From runs %1; candidates %2</source>
        <translation>来自运行 %1；候选 %2</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Gain (child / parent fitness)</source>
        <translation>增益（子代 / 父代适应度）</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Gains of the successful applications</source>
        <translation>成功应用的增益</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>No gains recorded yet</source>
        <translation>尚无增益记录</translation>
    </message>
</context>
<context>
    <name>kfgui::LibraryEditDialog</name>
    <message>
        <location filename="../gui/library/libraryeditdialog.cpp" line="+48"/>
        <source>Edit pattern %1</source>
        <translation>编辑模式 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Op class</source>
        <translation>算子类别</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Family</source>
        <translation>系列</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bound tags</source>
        <translation>瓶颈标签</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>memory, compute, latency, occupancy…</source>
        <translation>memory, compute, latency, occupancy…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Description</source>
        <translation>描述</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Edit insight</source>
        <translation>编辑洞见</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>When op class</source>
        <translation>条件：算子类别</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>When bound</source>
        <translation>条件：瓶颈</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>When diagnosis status</source>
        <translation>条件：诊断状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>When expert</source>
        <translation>条件：专家</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>any</source>
        <translation>任意</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Action</source>
        <translation>动作</translation>
    </message>
</context>
<context>
    <name>kfgui::LibraryTableModel</name>
    <message>
        <location filename="../gui/library/librarytablemodel.cpp" line="+19"/>
        <source>active</source>
        <translation>有效</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>broken</source>
        <translation>已失效</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>proposed</source>
        <translation>待审核</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>approved</source>
        <translation>已批准</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>rejected</source>
        <translation>已拒绝</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Name / action</source>
        <translation>名称 / 动作</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Op class</source>
        <translation>算子类别</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bound</source>
        <translation>瓶颈</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Evidence</source>
        <translation>证据</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>pattern</source>
        <translation>模式</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 of %2 kept</source>
        <translation>保留 %1/%2</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>insight</source>
        <translation>洞见</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+1"/>
        <source>any</source>
        <translation>任意</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 of %2, median ×%3</source>
        <translation>成功 %1/%2，中位数 ×%3</translation>
    </message>
</context>
<context>
    <name>kfgui::LibraryView</name>
    <message>
        <location filename="../gui/library/libraryview.cpp" line="+59"/>
        <source>Patterns and insights</source>
        <translation>模式与洞见</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+187"/>
        <source>Any op class</source>
        <translation>任意算子类别</translation>
    </message>
    <message>
        <location line="-186"/>
        <location line="+187"/>
        <source>Any bound</source>
        <translation>任意瓶颈</translation>
    </message>
    <message>
        <location line="-186"/>
        <source>Any status</source>
        <translation>任意状态</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Approve</source>
        <translation>批准</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reject</source>
        <translation>拒绝</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Edit…</source>
        <translation>编辑…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tag…</source>
        <translation>标签…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Import…</source>
        <translation>导入…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Search patterns and insights (full text)</source>
        <translation>搜索模式与洞见（全文）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Patterns</source>
        <translation>模式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Insights</source>
        <translation>洞见</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Active patterns</source>
        <translation>有效模式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Broken patterns</source>
        <translation>已失效模式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Proposed insights</source>
        <translation>待审核洞见</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Approved insights</source>
        <translation>已批准洞见</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Rejected insights</source>
        <translation>已拒绝洞见</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Approve the selected insight: the search will use it</source>
        <translation>批准所选洞见：搜索将使用它</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reject the selected insight: the search will ignore it</source>
        <translation>拒绝所选洞见：搜索将忽略它</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Set the bound tags of the selected pattern</source>
        <translation>设置所选模式的瓶颈标签</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>Cannot open the library %1:
%2</source>
        <translation>无法打开经验库 %1：
%2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Experience library</source>
        <translation>经验库</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>No library is open.</source>
        <translation>未打开经验库。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>The library reported an unknown error.</source>
        <translation>经验库报告了未知错误。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message numerus="yes">
        <location line="+57"/>
        <source>%n entries shown</source>
        <translation>
            <numerusform>显示 %n 个条目</numerusform>
        </translation>
    </message>
    <message>
        <location line="+1"/>
        <source> of %1</source>
        <translation>（共 %1 个）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Insight status</source>
        <translation>洞见状态</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <location line="+32"/>
        <source>Tag</source>
        <translation>标签</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Tag pattern</source>
        <translation>设置模式标签</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Bound tags, separated by commas:</source>
        <translation>瓶颈标签（以逗号分隔）：</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>pattern %1</source>
        <translation>模式 %1</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>insight %1</source>
        <translation>洞见 %1</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+3"/>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>Delete %1 from the library? This cannot be undone.</source>
        <translation>要从经验库中删除%1吗？此操作无法撤销。</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Import library entries</source>
        <translation>导入经验库条目</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Library JSON (*.json);;All files (*)</source>
        <translation>经验库 JSON (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Export the library</source>
        <translation>导出经验库</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Library JSON (*.json)</source>
        <translation>经验库 JSON (*.json)</translation>
    </message>
    <message>
        <location line="+7"/>
        <location line="+5"/>
        <location line="+15"/>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <location line="-20"/>
        <source>Cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Imported %1 patterns, %2 insights and %3 improvement records.</source>
        <translation>已导入 %1 个模式、%2 个洞见和 %3 条改进记录。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Skipped:</source>
        <translation>已跳过：</translation>
    </message>
    <message>
        <location line="+12"/>
        <location line="+3"/>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>kfgui::LineageView</name>
    <message>
        <location filename="../gui/runs/lineageview.cpp" line="+19"/>
        <source>Candidate</source>
        <translation>候选</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Expert</source>
        <translation>专家</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Speedup</source>
        <translation>加速比</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Gain</source>
        <translation>增益</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Lineage: select a candidate</source>
        <translation>谱系：请选择一个候选</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>not evaluated</source>
        <translation>未评估</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+2"/>
        <source>%1×</source>
        <translation>%1×</translation>
    </message>
    <message numerus="yes">
        <location line="+4"/>
        <source>Lineage of candidate %1 (%n step(s))</source>
        <translation>
            <numerusform>候选 %1 的谱系（%n 步）</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kfgui::LlmConfig</name>
    <message>
        <location filename="../gui/settings/llmconfigfile.cpp" line="+33"/>
        <source>Cannot read %1: %2</source>
        <translation>无法读取 %1：%2</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>%1 is not valid JSON</source>
        <translation>%1 不是有效的 JSON</translation>
    </message>
    <message>
        <location line="+12"/>
        <location line="+5"/>
        <source>Cannot write %1: %2</source>
        <translation>无法写入 %1：%2</translation>
    </message>
</context>
<context>
    <name>kfgui::LlmProvidersPage</name>
    <message>
        <location filename="../gui/settings/llmproviderspage.cpp" line="+55"/>
        <source>Store key in keyring</source>
        <translation>将密钥存入钥匙串</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Base URL</source>
        <translation>基础 URL</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Input per Mtok</source>
        <translation>每百万输入令牌价格</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Output per Mtok</source>
        <translation>每百万输出令牌价格</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Concurrency</source>
        <translation>并发数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Key variable</source>
        <translation>密钥环境变量</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Models: the model ids the endpoint serves, separated by commas. Key variable: the environment variable that holds the key when it is not in the keyring.</source>
        <translation>模型：该端点提供的模型 ID，以逗号分隔。密钥环境变量：密钥不在钥匙串中时保存密钥的环境变量。</translation>
    </message>
    <message>
        <location line="-42"/>
        <source>Add provider</source>
        <translation>添加提供方</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Remove provider</source>
        <translation>移除提供方</translation>
    </message>
    <message>
        <location line="+47"/>
        <source>API key of the selected provider</source>
        <translation>所选提供方的 API 密钥</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Expert role</source>
        <translation>专家角色</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Models (empty: every model)</source>
        <translation>模型（留空：全部模型）</translation>
    </message>
    <message>
        <location line="+20"/>
        <location line="+4"/>
        <location line="+3"/>
        <source>unlimited</source>
        <translation>不限</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Key:</source>
        <translation>密钥：</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Providers</source>
        <translation>提供方</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Models per expert role</source>
        <translation>各专家角色的模型</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Budgets of a run (0: unlimited)</source>
        <translation>每次运行的预算（0：不限）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Tokens:</source>
        <translation>令牌：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cost:</source>
        <translation>费用：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Calls:</source>
        <translation>调用：</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>No keyring service is available (%1): each provider&apos;s key is taken from its environment variable.</source>
        <translation>没有可用的钥匙串服务（%1）：各提供方的密钥取自其环境变量。</translation>
    </message>
    <message>
        <location line="+9"/>
        <location line="+168"/>
        <source>The key of %1 is in the keyring.</source>
        <translation>%1 的密钥已在钥匙串中。</translation>
    </message>
    <message>
        <location line="-165"/>
        <source>The key could not be stored: no keyring service is available (%1). Set the provider&apos;s environment variable instead.</source>
        <translation>无法保存密钥：没有可用的钥匙串服务（%1）。请改为设置该提供方的环境变量。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>OpenAI-compatible</source>
        <translation>OpenAI 兼容</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Anthropic</source>
        <translation>Anthropic</translation>
    </message>
    <message>
        <location line="+85"/>
        <source>Provider %1: the concurrency must be a whole number.</source>
        <translation>提供方 %1：并发数必须是整数。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Provider %1: the prices must be numbers (money per million tokens).</source>
        <translation>提供方 %1：价格必须是数字（每百万令牌的费用）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Provider %1: name at least one model.</source>
        <translation>提供方 %1：请至少填写一个模型。</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Not saved: %1</source>
        <translation>未保存：%1</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Select a provider to store its key in the keyring.</source>
        <translation>选择一个提供方，将其密钥存入钥匙串。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No key of %1 in the keyring: its environment variable is used, if set.</source>
        <translation>钥匙串中没有 %1 的密钥：如已设置，将使用其环境变量。</translation>
    </message>
</context>
<context>
    <name>kfgui::MainWindow</name>
    <message>
        <location filename="../gui/mainwindow.cpp" line="+372"/>
        <source>Kernel Foundry</source>
        <translation>Kernel Foundry</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 — Kernel Foundry</source>
        <translation>%1 — Kernel Foundry</translation>
    </message>
    <message>
        <location line="-265"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location line="-38"/>
        <source>Tasks</source>
        <translation>任务</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Search</source>
        <translation>搜索</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Candidate</source>
        <translation>候选</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Library</source>
        <translation>经验库</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>&amp;New Project…</source>
        <translation>新建项目(&amp;N)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Open Project…</source>
        <translation>打开项目(&amp;O)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Add Task from Folder…</source>
        <translation>从文件夹添加任务(&amp;A)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Add &amp;KernelBench Problems…</source>
        <translation>添加 &amp;KernelBench 问题…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Show &amp;Tasks Folder…</source>
        <translation>显示任务文件夹(&amp;T)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Start Search</source>
        <translation>开始搜索(&amp;S)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Pause</source>
        <translation>暂停(&amp;P)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Resume</source>
        <translation>继续(&amp;R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>S&amp;top</source>
        <translation>停止(&amp;T)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Search KernelBench Problem &amp;Set…</source>
        <translation>搜索 KernelBench 问题集(&amp;S)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;KernelBench Report…</source>
        <translation>KernelBench 报告(&amp;K)…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;About Kernel Foundry</source>
        <translation>关于 Kernel Foundry(&amp;A)</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>No keyring service is available (%1): LLM keys are taken from the providers&apos; environment variables.</source>
        <translation>没有可用的钥匙串服务（%1）：LLM 密钥取自各提供方的环境变量。</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>Create or open a project first (File › New Project…): the problem set is kept in it.</source>
        <translation>请先创建或打开一个项目（文件 › 新建项目…）：问题集保存在项目中。</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+56"/>
        <source>Cannot add the KernelBench problems</source>
        <translation>无法添加 KernelBench 问题</translation>
    </message>
    <message numerus="yes">
        <location line="-47"/>
        <source>%n KernelBench problem(s) of level %1 added to the project</source>
        <translation>
            <numerusform>已将级别 %1 的 %n 个 KernelBench 问题添加到项目</numerusform>
        </translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Add KernelBench Problems</source>
        <translation>添加 KernelBench 问题</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the folder holding KernelBench/level1, …</source>
        <translation>包含 KernelBench/level1 等的文件夹</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>KernelBench folder</source>
        <translation>KernelBench 文件夹</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>e.g. 1-20,25; empty: the whole level</source>
        <translation>例如 1-20,25；留空：整个级别</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The problems are listed in the Tasks tab; the set is kept in the project&apos;s kernelbench.json.</source>
        <translation>问题列在“任务”标签页中；问题集保存在项目的 kernelbench.json 中。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>KernelBench folder:</source>
        <translation>KernelBench 文件夹：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Level:</source>
        <translation>级别：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Problems:</source>
        <translation>问题：</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Latest run: %1 (%2), no correct ModelNew yet.</source>
        <translation>最近一次运行：%1（%2），尚无正确的 ModelNew。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Latest run: %1 (%2), best speedup %3× eager PyTorch (candidate %4).</source>
        <translation>最近一次运行：%1（%2），最佳加速比为 eager PyTorch 的 %3×（候选 %4）。</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>A search is running</source>
        <translation>搜索正在运行</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Stop the running search before opening another project.</source>
        <translation>请先停止正在运行的搜索，再打开其他项目。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Cannot open the project</source>
        <translation>无法打开项目</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>No search in this project yet. Pick a task and press Start search.</source>
        <translation>此项目中尚无搜索。请选择一个任务，然后点击“开始搜索”。</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>Run %1 on %2: %3 — %4</source>
        <translation>运行 %1（%2）：%3 — %4</translation>
    </message>
    <message>
        <location line="-63"/>
        <location line="+39"/>
        <source>Cannot read the project&apos;s runs: %1</source>
        <translation>无法读取项目的运行记录：%1</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Cannot read run %1: %2</source>
        <translation>无法读取运行 %1：%2</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>No recent projects</source>
        <translation>没有最近的项目</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Open the &amp;Demo Project</source>
        <translation>打开演示项目(&amp;D)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>New Project: choose an empty folder</source>
        <translation>新建项目：选择一个空文件夹</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>New Project</source>
        <translation>新建项目</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1 already holds a project; it is opened instead.</source>
        <translation>%1 中已有项目，将改为打开该项目。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Open Project</source>
        <translation>打开项目</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Kernel Foundry projects (project.kfproj)</source>
        <translation>Kernel Foundry 项目 (project.kfproj)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Add Task from Folder</source>
        <translation>从文件夹添加任务</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Cannot add the task</source>
        <translation>无法添加任务</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Task copied into the project: %1</source>
        <translation>任务已复制到项目中：%1</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Show Tasks Folder</source>
        <translation>显示任务文件夹</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>not supported by the KernelBench bridge</source>
        <translation>KernelBench 桥接不支持</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>does not load</source>
        <translation>无法加载</translation>
    </message>
    <message>
        <location line="-224"/>
        <location line="+253"/>
        <location line="+44"/>
        <location line="+100"/>
        <source>No project</source>
        <translation>没有项目</translation>
    </message>
    <message>
        <location line="-144"/>
        <location line="+44"/>
        <source>Create or open a project first (File › New Project…); runs are kept in it.</source>
        <translation>请先新建或打开一个项目（文件 › 新建项目…）；运行记录保存在项目中。</translation>
    </message>
    <message>
        <location line="-39"/>
        <source>No task</source>
        <translation>没有任务</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Select a task that loads in the Tasks tab.</source>
        <translation>请在“任务”标签页中选择一个可以加载的任务。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Not supported</source>
        <translation>不支持</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Backend not supported</source>
        <translation>不支持该后端</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Task %1 has no reference for the %2 backend.</source>
        <translation>任务 %1 没有 %2 后端的参考实现。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>No problem set</source>
        <translation>没有问题集</translation>
    </message>
    <message>
        <location line="+18"/>
        <location line="+4"/>
        <source>Cannot search the problem set</source>
        <translation>无法搜索问题集</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>A budget cannot be negative (0 means no limit).</source>
        <translation>预算不能为负数（0 表示不限）。</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>LLM experts</source>
        <translation>LLM 专家</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>The LLM providers&apos; configuration cannot be used: %1</source>
        <translation>LLM 提供方配置无法使用：%1</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Reading the LLM providers&apos; keys…</source>
        <translation>正在读取 LLM 提供方的密钥…</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>The keyring did not answer: LLM keys are taken from the providers&apos; environment variables.</source>
        <translation>钥匙串没有响应：LLM 密钥取自各提供方的环境变量。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Starting a search on %1…</source>
        <translation>正在对 %1 启动搜索…</translation>
    </message>
    <message>
        <location line="-215"/>
        <location line="+2"/>
        <location line="+232"/>
        <location line="+13"/>
        <source>Run %1 on %2: %3</source>
        <translation>运行 %1（%2）：%3</translation>
    </message>
    <message>
        <location line="-10"/>
        <source>Run %1 on KernelBench %2: %3 (the Python worker evaluates ModelNew files; Pause does not apply)</source>
        <translation>在 KernelBench %2 上的运行 %1：%3（Python worker 评估 ModelNew 文件；暂停不适用）</translation>
    </message>
    <message>
        <location line="-96"/>
        <location line="+111"/>
        <source>Open a project with KernelBench problems first (File › Add KernelBench Problems…).</source>
        <translation>请先打开包含 KernelBench 问题的项目（文件 › 添加 KernelBench 问题…）。</translation>
    </message>
    <message numerus="yes">
        <location line="+16"/>
        <source>Run %1: %2 — %3; %n evaluation(s)</source>
        <translation>
            <numerusform>运行 %1：%2 — %3；%n 次评估</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+3"/>
        <source>%1 — %2; %n evaluation(s)</source>
        <translation>
            <numerusform>%1 — %2；%n 次评估</numerusform>
        </translation>
    </message>
    <message>
        <location line="+3"/>
        <source>; best: candidate %1 at %2× the reference</source>
        <translation>；最佳：候选 %1，达到参考实现的 %2×</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Cannot read the lineage: %1</source>
        <translation>无法读取谱系：%1</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>No search is running</source>
        <translation>没有正在运行的搜索</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Start a search first: an edited candidate goes into an island of the running search.</source>
        <translation>请先启动搜索：编辑后的候选将加入正在运行的搜索中的一个岛。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Edited candidate sent to island %1 of the running search</source>
        <translation>编辑后的候选已发送到正在运行的搜索的岛 %1</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>No tasks folder found. Use File › Show Tasks Folder… or start with --tasks DIR.</source>
        <translation>未找到任务文件夹。请使用“文件 › 显示任务文件夹…”，或以 --tasks DIR 启动。</translation>
    </message>
    <message numerus="yes">
        <location line="+7"/>
        <source>, %n KernelBench problem(s) in the project</source>
        <translation>
            <numerusform>，项目中有 %n 个 KernelBench 问题</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>, %n failed to load</source>
        <translation>
            <numerusform>，%n 个加载失败</numerusform>
        </translation>
    </message>
    <message>
        <location line="+32"/>
        <source>Stopping the search…</source>
        <translation>正在停止搜索…</translation>
    </message>
    <message>
        <location line="-50"/>
        <source>About Kernel Foundry</source>
        <translation>关于 Kernel Foundry</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;h3&gt;Kernel Foundry %1&lt;/h3&gt;&lt;p&gt;Evolves fast GPU kernels and verifies every candidate against the task&apos;s reference.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Kernel Foundry %1&lt;/h3&gt;&lt;p&gt;演化快速的 GPU 内核，并将每个候选内核与任务的参考实现进行对照验证。&lt;/p&gt;</translation>
    </message>
    <message numerus="yes">
        <location line="+15"/>
        <location line="+4"/>
        <source>%n task(s) in %1</source>
        <translation>
            <numerusform>%1 中有 %n 个任务</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location line="+2"/>
        <source>%n task(s) in %1, %2 failed to load</source>
        <translation>
            <numerusform>%1 中有 %n 个任务，其中 %2 个加载失败</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kfgui::MetricsComparison</name>
    <message>
        <location filename="../gui/compare/metricscomparison.cpp" line="+118"/>
        <source>Metrics, % of the larger value (values in the table)</source>
        <translation>指标，以两者中较大值的百分比表示（具体数值见表格）</translation>
    </message>
</context>
<context>
    <name>kfgui::MetricsTableModel</name>
    <message>
        <location line="-83"/>
        <source>Metric</source>
        <translation>指标</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>B / A</source>
        <translation>B / A</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Lower is better</source>
        <translation>越低越好</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Higher is better</source>
        <translation>越高越好</translation>
    </message>
</context>
<context>
    <name>kfgui::OutcomeChart</name>
    <message>
        <location filename="../gui/runs/outcomechart.cpp" line="+49"/>
        <source>Outcomes per evaluation window</source>
        <translation>各评估窗口的结果</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Evaluations</source>
        <translation>评估次数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Candidates</source>
        <translation>候选数</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>other</source>
        <translation>其他</translation>
    </message>
</context>
<context>
    <name>kfgui::PopulationModel</name>
    <message>
        <location filename="../gui/runs/populationmodel.cpp" line="+120"/>
        <source>Id</source>
        <translation>ID</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Island</source>
        <translation>岛</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Expert</source>
        <translation>专家</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Generation</source>
        <translation>代</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Speedup</source>
        <translation>加速比</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Time (ms)</source>
        <translation>时间 (ms)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>GB/s</source>
        <translation>GB/s</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bound</source>
        <translation>瓶颈</translation>
    </message>
</context>
<context>
    <name>kfgui::PopulationView</name>
    <message>
        <location filename="../gui/runs/populationview.cpp" line="+22"/>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Filter: expert, status, bound, id…</source>
        <translation>筛选：专家、状态、瓶颈、ID…</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Compare the two selected candidates side by side</source>
        <translation>并排比较所选的两个候选</translation>
    </message>
</context>
<context>
    <name>kfgui::ProjectSession</name>
    <message>
        <location filename="../gui/project/projectsession.cpp" line="+64"/>
        <source>The project already has a task folder %1.</source>
        <translation>项目中已有任务文件夹 %1。</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>No project is open.</source>
        <translation>没有打开的项目。</translation>
    </message>
</context>
<context>
    <name>kfgui::ProvenancePanel</name>
    <message>
        <location filename="../gui/candidate/provenancepanel.cpp" line="+18"/>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Expert</source>
        <translation>专家</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Island</source>
        <translation>岛</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Generation</source>
        <translation>代</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Parents</source>
        <translation>父代</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Author</source>
        <translation>作者</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Family</source>
        <translation>系列</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Tunables</source>
        <translation>可调参数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>No rationale recorded.</source>
        <translation>未记录依据。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Rationale</source>
        <translation>依据</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>%1 (%2, %3)</source>
        <translation>%1（%2，%3）</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>none (seed)</source>
        <translation>无（种子）</translation>
    </message>
</context>
<context>
    <name>kfgui::RooflineChart</name>
    <message>
        <location filename="../gui/compare/rooflinechart.cpp" line="+61"/>
        <source>Candidates</source>
        <translation>候选</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Arithmetic intensity (FLOP/byte)</source>
        <translation>算术强度 (FLOP/byte)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>GFLOP/s</source>
        <translation>GFLOP/s</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Memory roof (%1 GB/s)</source>
        <translation>内存带宽上限 (%1 GB/s)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Compute roof (%1 GFLOP/s)</source>
        <translation>计算性能上限 (%1 GFLOP/s)</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>No correct, timed candidate in this run yet.</source>
        <translation>此运行中尚无正确且已计时的候选。</translation>
    </message>
</context>
<context>
    <name>kfgui::RunConfigWidget</name>
    <message>
        <location filename="../gui/runs/runconfigwidget.cpp" line="+33"/>
        <source>unlimited</source>
        <translation>不限</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> evaluations</source>
        <translation> 次评估</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Host (CPU)</source>
        <translation>主机 (CPU)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CUDA appears once a worker has found a device.</source>
        <translation>工作线程找到设备后，此处将出现 CUDA。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>all cores (%1)</source>
        <translation>全部核心 (%1)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source> ms</source>
        <translation> ms</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Timed region per candidate: repetitions adapt until it lasts this long.</source>
        <translation>每个候选的计时区间：重复次数会自动调整，直到持续达到此时长。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Islands:</source>
        <translation>岛数量：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Population per island:</source>
        <translation>每岛种群规模：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Budget:</source>
        <translation>预算：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Time limit:</source>
        <translation>时间限制：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Seed:</source>
        <translation>随机种子：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Backend:</source>
        <translation>后端：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Device:</source>
        <translation>设备：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compile in parallel:</source>
        <translation>并行编译：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Timing per candidate:</source>
        <translation>每个候选的计时：</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>No CUDA device found: the host backend runs on the CPU.</source>
        <translation>未找到 CUDA 设备：主机后端在 CPU 上运行。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>CUDA (GPU)</source>
        <translation>CUDA (GPU)</translation>
    </message>
</context>
<context>
    <name>kfgui::RunPanel</name>
    <message>
        <location filename="../gui/runs/runpanel.cpp" line="+20"/>
        <source>LLM experts</source>
        <translation>LLM 专家</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Start search</source>
        <translation>开始搜索</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Resume</source>
        <translation>继续</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Run configuration</source>
        <translation>运行配置</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Let the LLM experts of Settings › LLM providers propose children beside the built-in experts</source>
        <translation>让“设置 › LLM 提供方”中的 LLM 专家与内置专家一起提出子代</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Configure LLM providers in Settings › LLM providers to use LLM experts</source>
        <translation>在“设置 › LLM 提供方”中配置提供方后即可使用 LLM 专家</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Select a task in the Tasks tab.</source>
        <translation>请在“任务”标签页中选择一个任务。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Task &lt;b&gt;%1&lt;/b&gt;: %2</source>
        <translation>任务 &lt;b&gt;%1&lt;/b&gt;：%2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Task &lt;b&gt;%1&lt;/b&gt;</source>
        <translation>任务 &lt;b&gt;%1&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>State: %1</source>
        <translation>状态：%1</translation>
    </message>
</context>
<context>
    <name>kfgui::RunPicker</name>
    <message>
        <location filename="../gui/runs/runpicker.cpp" line="+43"/>
        <source>The run shown in the search view: the live run or an earlier one of the project</source>
        <translation>搜索视图中显示的运行：当前运行或项目中较早的运行</translation>
    </message>
    <message>
        <location line="+49"/>
        <source>live</source>
        <translation>当前</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>best %1×</source>
        <translation>最佳 %1×</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>no correct candidate</source>
        <translation>没有正确的候选</translation>
    </message>
    <message numerus="yes">
        <location line="+1"/>
        <source>Run %1 — %2, %3, %4, %n evaluation(s), %5</source>
        <translation>
            <numerusform>运行 %1 — %2，%3，%4，%n 次评估，%5</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kfgui::SearchView</name>
    <message>
        <location filename="../gui/runs/searchview.cpp" line="+74"/>
        <source>No search yet. Pick a task and press Start search.</source>
        <translation>尚无搜索。请选择一个任务，然后点击“开始搜索”。</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>stopped: %1</source>
        <translation>已停止：%1</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>island %1: %2</source>
        <translation>岛 %1：%2</translation>
    </message>
    <message numerus="yes">
        <location line="+4"/>
        <source>LLM: %n call(s), %1 input + %2 output tokens, cost %3</source>
        <translation>
            <numerusform>LLM：%n 次调用，输入 %1 + 输出 %2 个令牌，费用 %3</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>kfgui::SearchWorker</name>
    <message>
        <location filename="../gui/runs/kernelbenchjob.cpp" line="+45"/>
        <source>KernelBench trials and timed calls must be at least 1</source>
        <translation>KernelBench 的试验次数和计时调用次数必须至少为 1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>unknown KernelBench tolerance policy &apos;%1&apos; (Settings › Executor)</source>
        <translation>未知的 KernelBench 容差策略“%1”（设置 › 执行器）</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>unknown KernelBench baseline &apos;%1&apos; (eager or compile)</source>
        <translation>未知的 KernelBench 基线“%1”（eager 或 compile）</translation>
    </message>
    <message>
        <location line="+10"/>
        <location filename="../gui/runs/searchworker.cpp" line="+30"/>
        <source>the LLM configuration is not valid JSON</source>
        <translation>LLM 配置不是有效的 JSON</translation>
    </message>
    <message>
        <location line="+94"/>
        <source>%1 of %2 problem(s) of the set searched</source>
        <translation>已搜索问题集 %2 个问题中的 %1 个</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>; skipped: %1</source>
        <translation>；已跳过：%1</translation>
    </message>
    <message>
        <location filename="../gui/runs/searchworker.cpp" line="+75"/>
        <source>unknown backend %1</source>
        <translation>未知的后端 %1</translation>
    </message>
    <message>
        <location filename="../gui/runs/kernelbenchjob.cpp" line="+11"/>
        <location filename="../gui/runs/searchworker.cpp" line="+43"/>
        <source>unknown error in the engine thread</source>
        <translation>引擎线程中发生未知错误</translation>
    </message>
</context>
<context>
    <name>kfgui::SettingsDialog</name>
    <message>
        <location filename="../gui/settings/settingsdialog.cpp" line="+26"/>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>New searches start from these values; the run panel can change them for one run.</source>
        <translation>新的搜索以这些值为初始配置；可在运行面板中针对单次运行修改。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>System language</source>
        <translation>系统语言</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Language:</source>
        <translation>语言：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A new language applies the next time Kernel Foundry starts.</source>
        <translation>新语言将在 Kernel Foundry 下次启动时生效。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Runs and backend</source>
        <translation>运行与后端</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Executor</source>
        <translation>执行器</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>LLM providers</source>
        <translation>LLM 提供方</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Interface</source>
        <translation>界面</translation>
    </message>
</context>
<context>
    <name>kfgui::SpeedupChart</name>
    <message>
        <location filename="../gui/runs/speedupchart.cpp" line="+16"/>
        <source>Best speedup per island</source>
        <translation>各岛最佳加速比</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Evaluations</source>
        <translation>评估次数</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Speedup over the reference (×)</source>
        <translation>相对参考实现的加速比 (×)</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Island %1</source>
        <translation>岛 %1</translation>
    </message>
</context>
<context>
    <name>kfgui::TaskDetailsView</name>
    <message>
        <location filename="../gui/taskdetailsview.cpp" line="+29"/>
        <source>CUDA</source>
        <translation>CUDA</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>host</source>
        <translation>主机</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>// This task has no %1 reference.</source>
        <translation>// 此任务没有 %1 参考实现。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>// Cannot read %1: %2</source>
        <translation>// 无法读取 %1：%2</translation>
    </message>
    <message>
        <location line="+42"/>
        <source>Case</source>
        <translation>用例</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Backends</source>
        <translation>后端</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Sizes</source>
        <translation>尺寸</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Role</source>
        <translation>类型</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Entry point (CUDA)</source>
        <translation>入口函数 (CUDA)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CUDA reference</source>
        <translation>CUDA 参考实现</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Host reference</source>
        <translation>主机参考实现</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch problem</source>
        <translation>PyTorch 问题</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Task %1 · op class %2</source>
        <translation>任务 %1 · 算子类别 %2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Task %1 · op class %2 · tags %3</source>
        <translation>任务 %1 · 算子类别 %2 · 标签 %3</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No description.</source>
        <translation>无描述。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Sizes: %1 (%2)</source>
        <translation>尺寸：%1 (%2)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>// The entry point cannot be generated: %1</source>
        <translation>// 无法生成入口函数：%1</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>%1 (KernelBench)</source>
        <translation>%1（KernelBench）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source># Cannot read %1: %2</source>
        <translation># 无法读取 %1：%2</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>KernelBench level %1, problem %2 · op class %3</source>
        <translation>KernelBench 级别 %1，问题 %2 · 算子类别 %3</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>KernelBench level %1, problem %2 · op class %3 · %4</source>
        <translation>KernelBench 级别 %1，问题 %2 · 算子类别 %3 · %4</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Not run in this project yet.</source>
        <translation>尚未在此项目中运行。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Inputs: not found in the source.</source>
        <translation>输入：源代码中未找到。</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Inputs:
%1</source>
        <translation>输入：
%1</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Computation (from the manifest): %1</source>
        <translation>计算（来自清单）：%1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Computation: deriving it from the host reference…</source>
        <translation>计算：正在从主机参考实现推导…</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Computation (%1): %2</source>
        <translation>计算（%1）：%2</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No computation, so no op-class template: %1. Declare it in the manifest (docs/task-format.md).</source>
        <translation>没有计算描述，因此没有算子类模板：%1。请在清单中声明（docs/task-format.md）。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The generic expert: %1.</source>
        <translation>通用专家：%1。</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>primary</source>
        <translation>主用例</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>validation</source>
        <translation>验证用例</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>all</source>
        <translation>全部</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>This task could not be loaded.</source>
        <translation>无法加载此任务。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>No task selected</source>
        <translation>未选择任务</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose a task on the left to see what it asks for.</source>
        <translation>在左侧选择一个任务以查看其要求。</translation>
    </message>
</context>
<context>
    <name>kfgui::TaskListModel</name>
    <message>
        <location filename="../gui/tasklistmodel.cpp" line="+48"/>
        <source>No tasks folder</source>
        <translation>没有任务文件夹</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The folder %1 does not exist</source>
        <translation>文件夹 %1 不存在</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>KernelBench level %1 in %2: %3</source>
        <translation>%2 中的 KernelBench 级别 %1：%3</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>%1 (KernelBench)
Not supported</source>
        <translation>%1（KernelBench）
不支持</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 (KernelBench)</source>
        <translation>%1（KernelBench）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1
Failed to load: %2</source>
        <translation>%1
加载失败：%2</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>%1 (project)</source>
        <translation>%1（项目）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>KernelBench level %1, problem %2: %3</source>
        <translation>KernelBench 级别 %1，问题 %2：%3</translation>
    </message>
</context>
</TS>
